/**
 * Real DNS messages for upstream-layer tests: a framed upstream request for
 * a name (as the engine builds it) and the answer a server would send.
 */
import dnsPacket from 'dns-packet';
import { queryFor } from '../proxy/dns/request.js';
import { newTrace, type UpstreamRequest } from '../proxy/upstream/upstream.js';

export interface TestRequest extends UpstreamRequest {
  readonly name: string;
}

/** A padded query for `name` that asks for the server's idle timeout (RFC 7828), as the engine sends over TLS; `keepalive: false` doesn't ask. */
export function request(name: string, type: 'A' | 'AAAA' = 'A', options: { readonly keepalive?: boolean } = {}): TestRequest {
  return { name, ...queryFor(name, type, { pad: true, keepalive: options.keepalive ?? true }), trace: newTrace() };
}

/** The answer to the query in `framed` (an upstream request's wire, after its ID was written). */
export function answerTo(framed: Buffer, address = '192.0.2.1', questionName?: string): Buffer {
  const q = dnsPacket.decode(framed.subarray(2));
  const question = q.questions?.[0];
  if (!question) throw new Error('query without a question');
  return dnsPacket.encode({
    type: 'response',
    id: q.id ?? 0,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ ...question, name: questionName ?? question.name }],
    answers: [{ type: 'A', name: questionName ?? question.name, ttl: 60, data: address }],
  });
}
