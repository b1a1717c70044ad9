/**
 * The cleartext path passes the Upstream contract against Debian's unbound
 * answering plain DNS over UDP (the same port its DoT uses over TCP). It
 * keeps no connections and speaks no TLS, so the burst and resumption tests
 * don't apply; an unreachable server is one whose port is closed (no answer
 * within the attempt's timeout).
 */
import { freePort, startUnbound } from '../../../test-support/unbound.js';
import { upstreamContract } from '../../../test-support/upstream-contract.js';
import { CleartextUpstream } from './cleartext.js';

upstreamContract(
  'cleartext to unbound over UDP',
  async () => {
    // 300 datagrams at once overflow a default UDP receive buffer (212,992 octets
    // of kernel memory, ~1 KB per datagram) when unbound is slow to read on a
    // loaded machine, and cleartext makes one attempt per server: give unbound room.
    const unbound = await startUnbound({ names: 300, extraConfig: ['  so-rcvbuf: 4m'] });
    const closedPort = await freePort();
    return {
      make: () => new CleartextUpstream({ servers: [{ host: unbound.host, port: unbound.port }] }),
      makeUnreachable: () => new CleartextUpstream({ servers: [{ host: unbound.host, port: closedPort }], timeoutMs: 500 }),
      stop: () => unbound.stop(),
    };
  },
  { connections: false, bursts: false, resumption: false },
);
