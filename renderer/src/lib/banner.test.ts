import { describe, expect, it } from 'vitest';
import type { PrivacyState } from '../../../proxy/control/api-types.js';
import { bannerModel, bannerState, carriedByWhenOff, describeResolver, PRIVACY_STATES } from './banner.js';
import { status } from './fixtures.test-helpers.js';

describe('bannerModel', () => {
  it('private names the resolver and says it is verified', () => {
    const m = bannerModel(status());
    expect(m.tone).toBe('good');
    expect(m.icon).toBe('shield-check');
    expect(m.title).toBe('Your DNS is private');
    expect(m.leaves).toBe('Only encrypted DNS to Quad9 (dns.quad9.net, verified).');
    expect(m.reason).toBe('TLS to dns.quad9.net verified.');
  });

  it('unverified says so in words', () => {
    const m = bannerModel(status({ state: 'private-unverified', reason: 'certificate issued by an unknown CA: TLS interception?' }));
    expect(m.tone).toBe('caution');
    expect(m.leaves).toContain('not verified');
    expect(m.title).toMatch(/isn't verified/);
  });

  it('blocked and degraded use the API’s description of what leaves, or a fallback', () => {
    const blocked = bannerModel(status({ state: 'blocked', reason: 'port 853 timed out from this network', leaves: '' }));
    expect(blocked.tone).toBe('danger');
    expect(blocked.leaves).toMatch(/^Nothing/);
    expect(blocked.reason).toBe('Port 853 timed out from this network.');
    const degraded = bannerModel(status({ state: 'degraded', leaves: 'Cleartext DNS to 192.168.1.1' }));
    expect(degraded.leaves).toBe('Cleartext DNS to 192.168.1.1.');
    expect(bannerModel(status({ state: 'blocked', leaves: 'nothing: queries get SERVFAIL at once' })).leaves).toBe(
      'Nothing: queries get SERVFAIL at once.',
    );
  });

  it('every state has its own icon and label: never colour alone', () => {
    const icons = new Set<string>();
    const labels = new Set<string>();
    for (const s of PRIVACY_STATES) {
      const m = bannerModel(status({ state: s as PrivacyState }));
      icons.add(m.icon);
      labels.add(m.label);
      expect(m.title.length).toBeGreaterThan(10);
      expect(m.leaves.length).toBeGreaterThan(5);
    }
    expect(icons.size).toBe(PRIVACY_STATES.length);
    expect(labels.size).toBe(PRIVACY_STATES.length);
  });

  it('Off while the takeover is paused is its own state: not Off, with its own icon and words', () => {
    expect(bannerState('off', 1_000)).toBe('paused');
    expect(bannerState('off', null)).toBe('off');
    // Only Off can be a pause: a private proxy with a stale pausedUntil is private.
    expect(bannerState('private', 1_000)).toBe('private');
    const m = bannerModel(status({ state: 'off', reason: 'paused until 14:05: this machine asks its usual resolver' }), 1_000);
    expect(m).toMatchObject({ state: 'paused', label: 'Paused', icon: 'pause', tone: 'caution', reason: '' });
    expect(m.leaves).toMatch(/^Cleartext DNS to your usual resolver/);
    const labels = new Set(PRIVACY_STATES.map((s) => bannerModel(status({ state: s as PrivacyState })).label));
    expect(labels.has(m.label)).toBe(false);
  });

  it('describes a resolver without an auth name by address', () => {
    expect(describeResolver({ label: 'Lab', authName: null, addresses: ['127.0.0.1'], port: 8853 }, null)).toBe('Lab (127.0.0.1:8853)');
    expect(describeResolver({ label: 'dns.test (127.0.0.1)', authName: 'dns.test', addresses: ['127.0.0.1'], port: 853 }, true)).toBe(
      'dns.test (127.0.0.1), verified',
    );
  });
});

describe('carriedByWhenOff', () => {
  it('off or paused, says the usual DNS carries this machine\'s lookups, not dotstub\'s transport', () => {
    expect(carriedByWhenOff('paused')).toBe('Your usual DNS, not dotstub: private DNS is paused.');
    expect(carriedByWhenOff('off')).toBe('Your usual DNS, not dotstub: private DNS is off.');
    expect(carriedByWhenOff('private')).toBeNull();
    expect(carriedByWhenOff('blocked')).toBeNull();
  });
});
