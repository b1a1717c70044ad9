/** The DoT pool passes the Upstream contract against Debian's unbound over TLS with a test PKI. */
import { customResolver } from '../../config/resolvers.js';
import { freePort, startUnbound } from '../../../test-support/unbound.js';
import { upstreamContract } from '../../../test-support/upstream-contract.js';
import { Pool } from '../pool.js';
import { DEFAULT_POOL_OPTIONS } from '../pool/options.js';
import { dotConnectionFactory } from './connection.js';

upstreamContract('DoT pool to unbound', async () => {
  const unbound = await startUnbound({ names: 300 });
  const auth = { mode: 'strict' as const, ca: [unbound.pki.caPem] };
  const pool = (port: number, idleTimeoutMs?: number): Pool => {
    const resolver = customResolver({ address: unbound.host, port, authName: 'dns.test' });
    const options = { ...DEFAULT_POOL_OPTIONS, ...(idleTimeoutMs ? { idleTimeoutMs } : {}) };
    return new Pool({ transport: 'dot', resolver, options, factory: dotConnectionFactory(resolver, auth, options) });
  };
  const closedPort = await freePort();
  return {
    make: (o) => pool(unbound.port, o?.idleTimeoutMs),
    makeUnreachable: () => pool(closedPort),
    stop: () => unbound.stop(),
  };
});
