/**
 * A query dotstub asks on its own behalf (the captive-portal probe's
 * lookups, "Test resolvers", the upstream tests), built for a name as if a
 * client had asked it with RD set, and put through the same two steps as
 * every client query: validated (client-query.ts), then encoded for the
 * resolver (upstream-query.ts). So it travels and is checked exactly as a
 * client's would; the caller adds the trace to make it an UpstreamRequest.
 */
import type { RecordType } from 'dns-packet';
import { parseClientQuery } from './client-query.js';
import { dnsPacket } from './dns-packet.js';
import { encodeUpstreamQuery, type UpstreamQueryOptions, type UpstreamQuestion } from './upstream-query.js';

/** The framed upstream query for `name` and `type` (ID 0; header flags `flags`, RD by default), and the question its answer must echo. Throws RangeError for a name no query can carry. */
export function queryFor(name: string, type: RecordType, options: UpstreamQueryOptions, flags: number = dnsPacket.RECURSION_DESIRED): { readonly wire: Buffer; readonly question: UpstreamQuestion } {
  const raw = dnsPacket.encode({ type: 'query', id: 0, flags, questions: [{ type, name }] });
  const parsed = parseClientQuery(raw);
  if (!parsed.ok) throw new RangeError(`a query for ${name} ${type}: ${parsed.reason}`);
  const { wire } = encodeUpstreamQuery(parsed.query, options);
  return { wire, question: { key: parsed.query.question, bytes: parsed.query.questionBytes } };
}
