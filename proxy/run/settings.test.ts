import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { writeFileAtomic } from '../files/config-file.js';
import { addressConflict, ResolverStore, validateCustomResolver } from '../config/resolver-store.js';
import { DEFAULT_SETTINGS, parseSettingsPatch, SettingsStore } from './settings.js';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-settings-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('settings schema', () => {
  test('accepts a valid subset; rejects bad values and unknown fields with messages that say what to do', () => {
    expect(parseSettingsPatch({ padding: false, poolSize: 4 })).toEqual({ ok: true, patch: { padding: false, poolSize: 4 } });
    const r = parseSettingsPatch({ poolSize: 2.5, idleTimeoutSec: 0, logSize: 10_000_000, mode: 'loose', recordName: false });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.fields.poolSize).toBe('Connections per resolver must be a whole number from 1 to 16 connections');
    expect(r.fields.idleTimeoutSec).toBe('Idle timeout must be at least 1 second');
    expect(r.fields.logSize).toBe('Query log size must be at most 100000 records');
    expect(r.fields.mode).toMatch(/"strict".*"opportunistic"/);
    expect(r.fields.recordName).toMatch(/unknown field "recordName"/);
    expect(parseSettingsPatch('padding').ok).toBe(false);
  });
});

describe('settings file', () => {
  test('atomic write leaves no temp files and the content whole', async () => {
    const d = tmp();
    const f = path.join(d, 'x.json');
    await Promise.all(Array.from({ length: 20 }, (_, i) => writeFileAtomic(f, JSON.stringify({ i, pad: 'x'.repeat(10_000) }))));
    expect(fs.readdirSync(d)).toEqual(['x.json']);
    expect(() => JSON.parse(fs.readFileSync(f, 'utf8')) as unknown).not.toThrow();
    expect(fs.statSync(f).mode & 0o777).toBe(0o600);
  });

  test('missing file → defaults, no problem; saved values survive a new store', async () => {
    const d = tmp();
    const a = new SettingsStore(d);
    expect(a.load()).toEqual(DEFAULT_SETTINGS);
    expect(a.problem).toBeNull();
    await a.save({ poolSize: 2 });
    await a.save({ padding: false });
    const b = new SettingsStore(d);
    expect(b.load()).toEqual({ ...DEFAULT_SETTINGS, poolSize: 2, padding: false });
  });

  test('a bad file with no good copy: reported, defaults used, the file left alone', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'settings.json'), '{"poolSize": 0}');
    const s = new SettingsStore(d);
    expect(s.load()).toEqual(DEFAULT_SETTINGS);
    expect(s.problem?.fields.poolSize).toMatch(/at least 1/);
    expect(s.problem?.using).toMatch(/defaults/);
    expect(fs.readFileSync(path.join(d, 'settings.json'), 'utf8')).toBe('{"poolSize": 0}');
  });
});

describe('resolver store', () => {
  test('custom resolvers and the active choice persist; a CLI resolver made active is saved too', async () => {
    const d = tmp();
    const s = new ResolverStore(d);
    s.load();
    const v = validateCustomResolver({ address: '127.0.0.1, ::1', port: 8853, authName: 'dns.test.', label: 'Lab' });
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.spec).toMatchObject({ id: 'custom:127.0.0.1:8853', addresses: ['127.0.0.1', '::1'], authName: 'dns.test', label: 'Lab' });
    await s.add(v.spec);
    const cli = validateCustomResolver({ address: '127.0.0.3', authName: 'dns.test' });
    if (!cli.ok) throw new Error('valid');
    s.addSession(cli.spec);
    await s.setActive(cli.spec.id);
    const t = new ResolverStore(d);
    t.load();
    expect(t.persistedActive?.id).toBe('custom:127.0.0.3:853');
    expect(t.get('custom:127.0.0.1:8853')?.label).toBe('Lab');
    expect(t.all().filter((r) => r.id.startsWith('custom:'))).toHaveLength(2);
  });

  test('a DoH URL is saved with its resolver; a file from before DoH still loads', async () => {
    const d = tmp();
    const s = new ResolverStore(d);
    s.load();
    const v = validateCustomResolver({ address: '127.0.0.1', authName: 'dns.test', dohUrl: 'https://dns.test:8443/dns-query' });
    if (!v.ok) throw new Error(JSON.stringify(v.fields));
    await s.add(v.spec);
    const t = new ResolverStore(d);
    t.load();
    expect(t.get(v.spec.id)?.dohUrl).toBe('https://dns.test:8443/dns-query');
    const old = tmp();
    const legacy = { active: 'custom:127.0.0.2:853', custom: [{ id: 'custom:127.0.0.2:853', label: 'Old', addresses: ['127.0.0.2'], port: 853, authName: 'dns.test', pins: [] }] };
    fs.writeFileSync(path.join(old, 'resolvers.json'), JSON.stringify(legacy));
    const u = new ResolverStore(old);
    u.load();
    expect(u.problem).toBeNull();
    expect(u.persistedActive?.label).toBe('Old');
    expect(u.persistedActive?.dohUrl).toBeUndefined();
    expect(validateCustomResolver({ address: '127.0.0.1', dohUrl: 'http://dns.test/q' })).toMatchObject({ ok: false, fields: { dohUrl: expect.stringMatching(/https:\/\//) as unknown } });
  });

  test('validation gives a message per field', () => {
    const r = validateCustomResolver({ address: '1.2.3.4', port: 0, pins: ['abc'], authName: '-bad-' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.fields).sort()).toEqual(['authName', 'pins', 'pins.0', 'port']);
    expect(validateCustomResolver({ address: 5 })).toMatchObject({ ok: false, codes: { address: 'wrong_type' } });
    expect(validateCustomResolver({ port: 853 })).toMatchObject({ ok: false, codes: { address: 'required' } });
    expect(validateCustomResolver({ address: ' , ' })).toMatchObject({ ok: false, codes: { address: 'required' } });
    expect(validateCustomResolver({ address: '1.2.3.4', extra: true })).toMatchObject({ ok: false, codes: { extra: 'unknown_field' } });
  });

  test('a new resolver is checked against the listed ones (any shared address on the same port) and the mode', () => {
    const lab = validateCustomResolver({ address: '127.0.0.1, ::1', port: 8853, authName: 'dns.test', label: 'Lab' });
    if (!lab.ok) throw new Error('expected ok');
    expect(addressConflict({ addresses: ['::1'], port: 8853 }, [lab.spec])?.label).toBe('Lab');
    expect(addressConflict({ addresses: ['::1'], port: 853 }, [lab.spec])).toBeUndefined();
    const ctx = { existing: [lab.spec], activeId: lab.spec.id, strict: true };
    expect(validateCustomResolver({ label: 'Lab B', address: '::1', port: 8853, authName: 'dns.test' }, ctx)).toEqual({
      ok: false,
      fields: { address: '::1:8853 is already “Lab”, the resolver in use: use that one, or give a different address or port' },
      codes: { address: 'taken' },
    });
    expect(validateCustomResolver({ address: '10.0.0.9' }, ctx)).toMatchObject({ ok: false, codes: { authName: 'not_allowed' } });
    expect(validateCustomResolver({ address: '10.0.0.9' }, { ...ctx, strict: false }).ok).toBe(true);
    expect(validateCustomResolver({ address: '10.0.0.9', pins: [], authName: 'x.test' }, ctx).ok).toBe(true);
  });
});
