/**
 * A small DNS client for the portal probes and the sign-in window's proxy:
 * A and AAAA for a host, asked through the network's own resolver (a
 * CleartextUpstream), the addresses found or CleartextFailedError.
 */
import { dnsPacket } from '../../dns/dns-packet.js';
import { queryFor } from '../../dns/request.js';
import { CleartextFailedError } from '../../errors.js';
import type { CleartextUpstream } from '../../upstream/plain/cleartext.js';
import { newTrace, type UpstreamRequest } from '../../upstream/upstream.js';

export function lookupThrough(upstream: CleartextUpstream): (host: string) => Promise<string[]> {
  const ask = (name: string, type: 'A' | 'AAAA'): Promise<string[]> =>
    new Promise((resolve) => {
      let req: UpstreamRequest;
      try {
        req = { ...queryFor(name, type, { pad: false, keepalive: false }), trace: newTrace() };
      } catch {
        resolve([]);
        return;
      }
      upstream.resolve(req, (_r, _err, answer) => {
        if (!answer) {
          resolve([]);
          return;
        }
        try {
          const decoded = dnsPacket.decode(answer.raw);
          resolve((decoded.answers ?? []).filter((a) => a.type === type).map((a) => String((a as { data: unknown }).data)));
        } catch {
          resolve([]);
        }
      });
    });
  return async (host) => {
    const [a, aaaa] = await Promise.all([ask(host, 'A'), ask(host, 'AAAA')]);
    const all = [...a, ...aaaa];
    if (all.length === 0) throw new CleartextFailedError(`${host} has no address at the network's resolver`);
    return all;
  };
}
