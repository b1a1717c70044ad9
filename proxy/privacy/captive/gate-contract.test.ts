/**
 * The captive gate passes the Upstream contract on both of its open paths:
 * straight through to the encrypted upstream (no portal, not degraded), and
 * degraded mode's cleartext path to the network's resolver. (While a portal
 * holds names, the gate answers them itself with CaptiveHeldError: that path
 * is the captive tests'.)
 */
import { freePort, startUnbound } from '../../../test-support/unbound.js';
import { upstreamContract } from '../../../test-support/upstream-contract.js';
import { customResolver } from '../../config/resolvers.js';
import { dotConnectionFactory } from '../../upstream/dot/connection.js';
import { Pool } from '../../upstream/pool.js';
import { DEFAULT_POOL_OPTIONS } from '../../upstream/pool/options.js';
import { CleartextUpstream } from '../../upstream/plain/cleartext.js';
import { CaptiveGate } from './gate.js';

upstreamContract('captive gate, open: straight through to a DoT pool to unbound', async () => {
  const unbound = await startUnbound({ names: 300 });
  const auth = { mode: 'strict' as const, ca: [unbound.pki.caPem] };
  const gated = (port: number, idleTimeoutMs?: number): CaptiveGate => {
    const resolver = customResolver({ address: unbound.host, port, authName: 'dns.test' });
    const options = { ...DEFAULT_POOL_OPTIONS, ...(idleTimeoutMs ? { idleTimeoutMs } : {}) };
    return new CaptiveGate(null, new Pool({ transport: 'dot', resolver, options, factory: dotConnectionFactory(resolver, auth, options) }));
  };
  const closedPort = await freePort();
  return {
    make: (o) => gated(unbound.port, o?.idleTimeoutMs),
    makeUnreachable: () => gated(closedPort),
    stop: () => unbound.stop(),
  };
});

upstreamContract(
  'captive gate, degraded: every name in cleartext to the network resolver (unbound over UDP)',
  async () => {
    // As cleartext.test.ts: 300 datagrams at once need room in unbound's receive buffer.
    const unbound = await startUnbound({ names: 300, extraConfig: ['  so-rcvbuf: 4m'] });
    const closedPort = await freePort();
    // The encrypted upstream behind the gate is unreachable: every answer must come the degraded way.
    const resolver = customResolver({ address: unbound.host, port: closedPort, authName: 'dns.test' });
    const auth = { mode: 'strict' as const, ca: [unbound.pki.caPem] };
    const encrypted = (): Pool =>
      new Pool({ transport: 'dot', resolver, options: DEFAULT_POOL_OPTIONS, factory: dotConnectionFactory(resolver, auth, DEFAULT_POOL_OPTIONS) });
    const degraded = (port: number, timeoutMs?: number): CaptiveGate =>
      new CaptiveGate(null, encrypted(), { upstream: new CleartextUpstream({ servers: [{ host: unbound.host, port }], ...(timeoutMs ? { timeoutMs } : {}) }) });
    return {
      make: () => degraded(unbound.port),
      makeUnreachable: () => degraded(closedPort, 500),
      stop: () => unbound.stop(),
    };
  },
  { connections: false, bursts: false, resumption: false },
);
