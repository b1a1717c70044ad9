import { describe, expect, test } from 'vitest';
import type { OwnResolverView, ResolverView, ResolversView } from '../../../proxy/control/api-types.js';
import { networkOwnInUse, ownResolverWords } from './own-resolver-words.js';

const offer: NonNullable<OwnResolverView['offer']> = { name: 'dns.lab.test', protocol: 'dot', port: 853, addresses: ['10.53.1.1'], dohUrl: null, verifiedFor: '10.53.1.1' };
const base: OwnResolverView = { checkedAt: '2026-12-01T10:00:00.000Z', asked: '10.53.1.1', offer, rejected: null, detail: 'dns.lab.test verified for 10.53.1.1', choice: 'ask', inUse: false };

describe("a network's own encrypted resolver, in words", () => {
  test('an offer names the resolver, the protocol and the address it was verified for; chosen and in use say so', () => {
    expect(ownResolverWords(base, 'every-network')).toMatchObject({ kind: 'offer', text: 'This network offers its own encrypted resolver: dns.lab.test (DNS-over-TLS, verified for 10.53.1.1)' });
    expect(ownResolverWords({ ...base, choice: 'use', inUse: true }, 'every-network').kind).toBe('in-use');
    expect(ownResolverWords({ ...base, choice: 'use' }, 'every-network').kind).toBe('chosen');
  });

  test('a forged designation is said as refused, with why; none and not asked say what was (not) done', () => {
    const forged = ownResolverWords({ ...base, offer: null, rejected: { name: 'dns.test', why: 'the certificate of dns.test (10.53.2.2) is not valid for 10.53.1.1' } }, 'every-network');
    expect(forged).toMatchObject({ kind: 'forged', detail: 'the certificate of dns.test (10.53.2.2) is not valid for 10.53.1.1' });
    expect(forged.text).toContain('could not be verified: not offered');
    expect(ownResolverWords({ ...base, offer: null, detail: 'NXDOMAIN: no designated resolver' }, 'every-network').detail).toBe('Its resolver (10.53.1.1) was asked: NXDOMAIN: no designated resolver.');
    expect(ownResolverWords(null, 'where-local-names-allowed').text).toMatch(/^Not asked: in strict mode/);
  });
});

describe('the Resolvers page while the network’s own resolver is in use', () => {
  const quad9 = { id: 'quad9', label: 'Quad9', preset: true, addresses: ['9.9.9.9'], port: 853, authName: 'dns.quad9.net', pins: [], medianLatencyMs: 12 } as unknown as ResolverView;
  test('says what carries the lookups here, and where the user’s own choice applies', () => {
    const onOwn: ResolversView = { active: 'network:dns.lab.test', chosen: 'quad9', previous: null, resolvers: [quad9] };
    const line = networkOwnInUse(onOwn, "dns.lab.test (this network's own)");
    expect(line?.chosenLabel).toBe('Quad9');
    expect(line?.text).toContain("In use on this network: dns.lab.test (this network's own), its own encrypted resolver, as you chose for it.");
    expect(line?.text).toContain('Quad9 is your choice on every other network.');
  });
  test('nothing to add while a listed resolver is in use (its card says so)', () => {
    expect(networkOwnInUse({ active: 'quad9', chosen: 'quad9', previous: null, resolvers: [quad9] }, 'Quad9')).toBeNull();
  });
});
