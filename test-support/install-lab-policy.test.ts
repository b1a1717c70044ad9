/**
 * The administrator's step the app asks for ("Turn on private DNS…"), as
 * the package installs it: polkit's action file passes polkit's own DTD
 * (with a broken copy as the control that the check catches mistakes), it
 * names the helper the package installs and the app runs, it asks an
 * administrator's password only of a user at the machine, and the helper
 * does one thing with nothing taken from its caller. The install lab
 * (install-lab.test.ts) shows polkitd reading it and pkexec running it in a
 * booted Debian.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { TURN_ON_HELPER, turnOnCommand } from '../app/proxy-process/service-connection.js';
import { skipWith } from './skips.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const POLICY_FILE = path.join(ROOT, 'packaging/org.dotstub.turn-on.policy');
const POLICY = fs.readFileSync(POLICY_FILE, 'utf8');
const HELPER = fs.readFileSync(path.join(ROOT, 'packaging/dotstub-turn-on'), 'utf8');
const DTD = '/usr/share/polkit-1/policyconfig-1.dtd';
const noXmllint =
  spawnSync('sh', ['-c', 'command -v xmllint']).status !== 0
    ? 'xmllint is not installed (apt-get install libxml2-utils)'
    : !fs.existsSync(DTD)
      ? `polkit's DTD (${DTD}) is missing (apt-get install polkitd)`
      : undefined;

function validate(text: string): { code: number | null; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dotstub-policy-'));
  try {
    const file = path.join(dir, 'org.dotstub.turn-on.policy');
    fs.writeFileSync(file, text);
    const r = spawnSync('xmllint', ['--noout', '--nonet', '--dtdvalid', DTD, file], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One element's text in the action (the file has one action). */
const element = (name: string): string | undefined => new RegExp(`<${name}>([^<]*)</${name}>`).exec(POLICY)?.[1];

describe('the polkit action for "Turn on private DNS…"', () => {
  test("the policy file is valid against polkit's DTD; a broken copy is not", skipWith(noXmllint), () => {
    expect(validate(POLICY)).toEqual({ code: 0, out: '' });
    // An element polkit doesn't know, in the wrong place: the DTD check must say so.
    const broken = validate(POLICY.replace('<allow_any>no</allow_any>', '<allow_anyone>no</allow_anyone>'));
    expect(broken.code).not.toBe(0);
    expect(broken.out).toContain('allow_anyone');
  });

  test('it says what happens, asks an administrator only of a user at the machine, and names the helper the package installs and the app runs', () => {
    expect(POLICY).toMatch(/<action id="org\.dotstub\.turn-on">/);
    expect(element('message')).toBe('Turn on private DNS for this machine');
    expect([element('allow_any'), element('allow_inactive'), element('allow_active')]).toEqual(['no', 'no', 'auth_admin_keep']);
    expect(POLICY).toContain(`<annotate key="org.freedesktop.policykit.exec.path">${TURN_ON_HELPER}</annotate>`);
    // Where the package puts the helper and the action file.
    const script = fs.readFileSync(path.join(ROOT, 'scripts/package-deb.mjs'), 'utf8');
    expect(script).toContain(`'usr/lib/dotstub/turn-on'`);
    expect(`/usr/lib/dotstub/turn-on`).toBe(TURN_ON_HELPER);
    expect(script).toContain(`'usr/share/polkit-1/actions/org.dotstub.turn-on.policy'`);
    // The app runs the helper when it is there (and the generic command only where no package put it).
    expect(turnOnCommand((f) => f === TURN_ON_HELPER)).toEqual(['pkexec', TURN_ON_HELPER]);
    expect(turnOnCommand(() => false)).toEqual(['pkexec', 'systemctl', 'enable', '--now', 'dotstub']);
  });

  test('the helper runs one fixed command and takes nothing from its caller (no arguments, no variables)', () => {
    expect(spawnSync('sh', ['-n', path.join(ROOT, 'packaging/dotstub-turn-on')]).status).toBe(0);
    const code = HELPER.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(code).toEqual(['exec /bin/systemctl enable --now dotstub.service']);
    expect(fs.statSync(path.join(ROOT, 'packaging/dotstub-turn-on')).mode & 0o111).not.toBe(0);
  });
});
