#!/usr/bin/env node
// A tiny UDP+TCP DNS server for the system-DNS lab (run inside the lab's
// namespaces): answers every A query with one fixed address and prints one
// line per query ("Q <name> <type>") so the test can count who was asked.
// Usage: node lab-dns-server.mjs HOST PORT ANSWER_ADDRESS [LOG_FILE]
// (LOG_FILE: the same lines appended to a file, for readers inside the lab.)
// ANSWER_ADDRESS/ad (e.g. 10.0.0.53/ad): answers say "validated" (AD) to a query that asks (AD or DO), as a
// validating resolver does.
import fs from 'node:fs';
import packet from 'dns-packet';
import { fixedAnswer, serveDns } from './lab-dns-serve.mjs';

const [host, portText, answerArg, logFile] = process.argv.slice(2);
const [answer, flag] = (answerArg ?? '').split('/');
const validates = flag === 'ad';
const port = Number(portText);

function respond(buf) {
  const q = packet.decode(buf);
  const question = q.questions?.[0];
  if (!question) return null;
  process.stdout.write(`Q ${question.name} ${question.type}\n`);
  if (logFile) fs.appendFileSync(logFile, `Q ${question.name} ${question.type}\n`);
  const asksAd = (q.flags & packet.AUTHENTIC_DATA) !== 0 || (q.additionals ?? []).some((r) => r.type === 'OPT' && (r.flags & packet.DNSSEC_OK) !== 0);
  return fixedAnswer(q, answer, validates && asksAd ? packet.AUTHENTIC_DATA : 0);
}

serveDns(host, port, respond);
