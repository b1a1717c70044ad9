/**
 * The answer cache passes the Upstream contract, wrapping a DoT pool to
 * Debian's unbound: `Cache(DoT(…))`. Bursts are the pool's (its own suite);
 * here repeats would be answered from the cache.
 */
import { freePort, startUnbound } from '../../test-support/unbound.js';
import { upstreamContract } from '../../test-support/upstream-contract.js';
import { customResolver } from '../config/resolvers.js';
import { dotConnectionFactory } from '../upstream/dot/connection.js';
import { Pool } from '../upstream/pool.js';
import { DEFAULT_POOL_OPTIONS } from '../upstream/pool/options.js';
import { AnswerCache } from './answer-cache.js';
import { CachingUpstream } from './caching-upstream.js';

upstreamContract(
  'answer cache over a DoT pool to unbound',
  async () => {
    const unbound = await startUnbound({ names: 300 });
    const auth = { mode: 'strict' as const, ca: [unbound.pki.caPem] };
    const cached = (port: number, idleTimeoutMs?: number): CachingUpstream => {
      const resolver = customResolver({ address: unbound.host, port, authName: 'dns.test' });
      const options = { ...DEFAULT_POOL_OPTIONS, ...(idleTimeoutMs ? { idleTimeoutMs } : {}) };
      return new CachingUpstream(new AnswerCache(), new Pool({ transport: 'dot', resolver, options, factory: dotConnectionFactory(resolver, auth, options) }));
    };
    const closedPort = await freePort();
    return {
      make: (o) => cached(unbound.port, o?.idleTimeoutMs),
      makeUnreachable: () => cached(closedPort),
      stop: () => unbound.stop(),
    };
  },
  { bursts: false },
);
