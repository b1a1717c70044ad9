#!/usr/bin/env node
// A small authoritative-style DNS server for the name-routing lab (run
// inside the lab's namespaces), standing in for a LAN's or a VPN's own
// resolver: answers from a zone given as JSON ({"printer.lan": {"A":
// "10.99.0.7"}, "8.0.99.10.in-addr.arpa": {"PTR": "nas.home.arpa"}}),
// NODATA for a name it has without that type, NXDOMAIN for everything else;
// prints one line per query ("Q <name> <type>") so the test sees what this
// resolver was asked. Usage: node lab-zone-server.mjs HOST PORT ZONE_JSON
import packet from 'dns-packet';
import { serveDns } from './lab-dns-serve.mjs';

const [host, portText, zoneText] = process.argv.slice(2);
const port = Number(portText);
const zone = Object.fromEntries(Object.entries(JSON.parse(zoneText)).map(([k, v]) => [k.toLowerCase(), v]));

function respond(buf) {
  const q = packet.decode(buf);
  const question = q.questions?.[0];
  if (!question) return null;
  process.stdout.write(`Q ${question.name} ${question.type}\n`);
  const records = zone[question.name.toLowerCase().replace(/\.$/, '')];
  const data = records?.[question.type];
  // One record, or several ({"ipv4only.arpa": {"AAAA": ["…::c000:aa", "…::c000:ab"]}}).
  const answers = data ? (Array.isArray(data) ? data : [data]).map((d) => ({ type: question.type, name: question.name, ttl: 1, data: d })) : [];
  return packet.encode({
    id: q.id,
    type: 'response',
    flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (records ? 0 : 3),
    questions: q.questions,
    answers,
  });
}

serveDns(host, port, respond);
