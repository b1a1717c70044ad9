/** The DoH pool passes the Upstream contract against Debian's unbound serving RFC 8484 with the test PKI. */
import { customResolver } from '../../config/resolvers.js';
import { freePort, startUnbound } from '../../../test-support/unbound.js';
import { upstreamContract } from '../../../test-support/upstream-contract.js';
import { Pool } from '../pool.js';
import { DEFAULT_POOL_OPTIONS } from '../pool/options.js';
import { dohConnectionFactory } from './connection.js';

upstreamContract('DoH pool to unbound', async () => {
  const unbound = await startUnbound({ names: 300, dohPort: 0 });
  const auth = { mode: 'strict' as const, ca: [unbound.pki.caPem] };
  const pool = (dohPort: number, idleTimeoutMs?: number): Pool => {
    // The DoT port is unbound's own; only the DoH URL is used here.
    const resolver = customResolver({ address: unbound.host, port: unbound.port, authName: 'dns.test', dohUrl: `https://dns.test:${dohPort}/dns-query` });
    const options = { ...DEFAULT_POOL_OPTIONS, ...(idleTimeoutMs ? { idleTimeoutMs } : {}) };
    return new Pool({ transport: 'doh', resolver, options, factory: dohConnectionFactory(resolver, auth, options) });
  };
  const closedPort = await freePort();
  return {
    make: (o) => pool(unbound.dohPort as number, o?.idleTimeoutMs),
    makeUnreachable: () => pool(closedPort),
    stop: () => unbound.stop(),
  };
});
