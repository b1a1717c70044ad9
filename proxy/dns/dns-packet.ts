/**
 * dns-packet, loaded through Node's CommonJS loader rather than an ESM
 * import. The product code takes it from here; tests may import it directly.
 *
 * Why (issue 11, memory): on Node 20 an ESM `import` of this CommonJS
 * package left the process ~9 MiB larger for good (RSS of a bare node 42.2
 * MiB; + `import('dns-packet')` 51.4–51.8; + `require('dns-packet')` 42.9).
 * Which part of Node's ESM-to-CommonJS path holds it (its scan of the
 * source for named exports is the suspect) was not pinned down.
 */
import { createRequire } from 'node:module';
import type DnsPacket from 'dns-packet';
import type DnsClasses from 'dns-packet/classes.js';
import type DnsTypes from 'dns-packet/types.js';

const require = createRequire(import.meta.url);

export const dnsPacket = require('dns-packet') as typeof DnsPacket;
export const dnsTypes = require('dns-packet/types.js') as typeof DnsTypes;
export const dnsClasses = require('dns-packet/classes.js') as typeof DnsClasses;
