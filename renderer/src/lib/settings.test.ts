import { describe, expect, it } from 'vitest';
import type { Settings } from '../../../proxy/control/api-types.js';
import { draftChanges, toDraft, validateDraft } from './settings.js';

const saved: Settings = { mode: 'strict', padding: true, idleTimeoutSec: 60, poolSize: 2, maxInFlight: 100, logSize: 10000, recordNames: true, portalCheck: true, cleartextFallback: false, networkDns: [] };

describe('settings form', () => {
  it('a fresh draft is valid and unchanged', () => {
    const d = toDraft(saved);
    expect(validateDraft(d)).toEqual({});
    expect(draftChanges(saved, d)).toEqual({});
  });

  it('says what is wrong with a number, in words', () => {
    const e = validateDraft({ ...toDraft(saved), idleTimeoutSec: '1.5', poolSize: '', maxInFlight: '0', logSize: 'lots' });
    expect(e.idleTimeoutSec).toMatch(/whole number of seconds/);
    expect(e.poolSize).toMatch(/Enter connections per resolver/);
    expect(e.maxInFlight).toMatch(/at least 1/);
    expect(e.logSize).toMatch(/whole number/);
  });

  it('sends only what changed, as numbers', () => {
    expect(draftChanges(saved, { ...toDraft(saved), recordNames: false, idleTimeoutSec: ' 30 ' })).toEqual({ recordNames: false, idleTimeoutSec: 30 });
  });
});
