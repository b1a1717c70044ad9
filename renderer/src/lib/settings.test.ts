import { describe, expect, it } from 'vitest';
import type { Settings } from '../../../proxy/control/api-types.js';
import { parseSettingsPatch } from '../../../proxy/run/settings.js';
import { draftChanges, errorList, NUMERIC_FIELDS, toDraft, validateDraft } from './settings.js';

const saved: Settings = { mode: 'strict', padding: true, idleTimeoutSec: 60, poolSize: 2, burstConnections: 4, maxInFlight: 100, logSize: 10000, recordNames: true, portalCheck: true, cleartextFallback: false, networkDns: [] };

describe('settings form', () => {
  it('a fresh draft is valid and unchanged', () => {
    const d = toDraft(saved);
    expect(validateDraft(d)).toEqual({});
    expect(draftChanges(saved, d)).toEqual({});
  });

  it('says what is wrong with each number, with the field’s name and its range (the schema’s words)', () => {
    const e = validateDraft({ ...toDraft(saved), idleTimeoutSec: '1.5', poolSize: '', maxInFlight: '0', logSize: '4' });
    expect(e.idleTimeoutSec).toBe('Idle timeout must be a whole number from 1 to 86400 seconds.');
    expect(e.poolSize).toBe('Enter connections per resolver in connections: 1 to 16, e.g. 1.');
    expect(e.maxInFlight).toBe('Queries in flight per connection must be at least 1 query.');
    expect(e.logSize).toBe('Query log size must be at least 100 records.');
    expect(validateDraft({ ...toDraft(saved), idleTimeoutSec: 'soon' }).idleTimeoutSec).toMatch(/^Idle timeout must be a whole number/);
  });

  it('the form and the API say the same thing for the same value', () => {
    const api = parseSettingsPatch({ logSize: 4 });
    expect(api.ok).toBe(false);
    const form = validateDraft({ ...toDraft(saved), logSize: '4' });
    expect(form.logSize).toBe(`${(api as { fields: Record<string, string> }).fields.logSize}.`);
  });

  it('ranges and examples are realistic: every example is allowed', () => {
    for (const f of NUMERIC_FIELDS) {
      expect(f.example).toBeGreaterThanOrEqual(f.min);
      expect(f.example).toBeLessThanOrEqual(f.max);
    }
    expect(NUMERIC_FIELDS.find((f) => f.key === 'logSize')?.range).toBe('Allowed: 100 to 100,000 records; e.g. 10,000.');
  });

  it('lists errors with human field names, in the form’s order', () => {
    expect(errorList({ logSize: 'x', mode: 'y' }).map((e) => e.label)).toEqual(['Privacy mode', 'Query log size']);
  });

  it('sends only what changed, as numbers', () => {
    expect(draftChanges(saved, { ...toDraft(saved), recordNames: false, idleTimeoutSec: ' 30 ' })).toEqual({ recordNames: false, idleTimeoutSec: 30 });
    expect(draftChanges(saved, { ...toDraft(saved), logSize: '20,000' })).toEqual({ logSize: 20000 });
  });
});
