/**
 * Real DNS messages for upstream-layer tests: a framed upstream request for
 * a name (as the engine builds it) and the answer a server would send.
 */
import dnsPacket from 'dns-packet';
import { parseClientQuery } from '../proxy/dns/client-query.js';
import { encodeUpstreamQuery, type UpstreamQuestion } from '../proxy/dns/upstream-query.js';
import { newTrace, type UpstreamRequest } from '../proxy/upstream/upstream.js';

export interface TestRequest extends UpstreamRequest {
  readonly name: string;
}

export function request(name: string, type: 'A' | 'AAAA' = 'A'): TestRequest {
  const raw = dnsPacket.encode({ type: 'query', id: 1, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] });
  const parsed = parseClientQuery(raw);
  if (!parsed.ok) throw new Error(parsed.reason);
  const question: UpstreamQuestion = { key: parsed.query.question, bytes: parsed.query.questionBytes };
  const { wire } = encodeUpstreamQuery(parsed.query, { pad: true, keepalive: true });
  return { name, wire, question, trace: newTrace() };
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
