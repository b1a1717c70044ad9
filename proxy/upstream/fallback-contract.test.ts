/**
 * The fallback passes the Upstream contract: `Fallback(DoT(…); DoH(…))` to
 * Debian's unbound serving both. The unreachable one has neither port open,
 * so a request fails over DoT, is handed to DoH once, and fails there, typed.
 */
import { freePort, startUnbound } from '../../test-support/unbound.js';
import { upstreamContract } from '../../test-support/upstream-contract.js';
import { customResolver } from '../config/resolvers.js';
import { dohConnectionFactory } from './doh/connection.js';
import { dotConnectionFactory } from './dot/connection.js';
import { Fallback } from './fallback.js';
import { Pool } from './pool.js';
import { DEFAULT_POOL_OPTIONS } from './pool/options.js';

upstreamContract('fallback of DoT and DoH pools to unbound', async () => {
  const unbound = await startUnbound({ names: 300, dohPort: 0 });
  const auth = { mode: 'strict' as const, ca: [unbound.pki.caPem] };
  const fallback = (dotPort: number, dohPort: number, idleTimeoutMs?: number): Fallback => {
    const resolver = customResolver({ address: unbound.host, port: dotPort, authName: 'dns.test', dohUrl: `https://dns.test:${dohPort}/dns-query` });
    const options = { ...DEFAULT_POOL_OPTIONS, ...(idleTimeoutMs ? { idleTimeoutMs } : {}) };
    return new Fallback({
      primary: new Pool({ transport: 'dot', resolver, options, selfRetry: false, factory: dotConnectionFactory(resolver, auth, options) }),
      secondary: new Pool({ transport: 'doh', resolver, options, factory: dohConnectionFactory(resolver, auth, options) }),
      primaryPort: dotPort,
      secondaryPort: dohPort,
    });
  };
  const closedDot = await freePort();
  const closedDoh = await freePort();
  return {
    make: (o) => fallback(unbound.port, unbound.dohPort as number, o?.idleTimeoutMs),
    makeUnreachable: () => fallback(closedDot, closedDoh),
    stop: () => unbound.stop(),
  };
});
