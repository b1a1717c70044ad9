/**
 * What dotstub remembers per network (issue 21, item 3), keyed by
 * captive/network-key.ts's hash of the gateway's MAC (never the network in
 * the clear), in one small JSON file (mode 0600) written with the project's
 * one atomic write (config/config-file.ts), so a crash leaves the old
 * memory or the new one:
 *
 *   { "version": 1, "networks": { "<key>": { "localNames": "allow", "localDomains": ["lan"], "seenAt": "…" } } }
 *
 * Today: the user's choice for local names on that network ("home: local
 * names allowed", "elsewhere: strict") and the local domains it owned when
 * last seen. A file that can't be read counts as no memory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../config/config-file.js';
import type { LocalNamesPolicy } from './name-owners.js';

export interface NetworkMemoryEntry {
  /** The user's choice; absent: not asked yet. */
  readonly localNames?: Exclude<LocalNamesPolicy, 'ask'>;
  /** The suffixes the network's links owned when last seen (for the Network view). */
  readonly localDomains?: readonly string[];
  /** ISO time it was last seen. */
  readonly seenAt?: string;
}

function entryOf(v: unknown): NetworkMemoryEntry | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const out: { localNames?: 'allow' | 'deny'; localDomains?: string[]; seenAt?: string } = {};
  if (o.localNames === 'allow' || o.localNames === 'deny') out.localNames = o.localNames;
  if (Array.isArray(o.localDomains)) out.localDomains = o.localDomains.filter((d): d is string => typeof d === 'string');
  if (typeof o.seenAt === 'string') out.seenAt = o.seenAt;
  return out;
}

export class NetworkMemory {
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  get(key: string): NetworkMemoryEntry | undefined {
    return entryOf(this.#read()[key]);
  }

  /** Merges `changes` into the network's entry and writes the file atomically. */
  update(key: string, changes: NetworkMemoryEntry): NetworkMemoryEntry {
    const all = this.#read();
    const next = { ...entryOf(all[key]), ...changes };
    fs.mkdirSync(path.dirname(this.#file), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(this.#file, JSON.stringify({ version: 1, networks: { ...all, [key]: next } }, null, 2) + '\n', 0o600);
    return next;
  }

  #read(): Record<string, unknown> {
    try {
      const j = JSON.parse(fs.readFileSync(this.#file, 'utf8')) as { networks?: Record<string, unknown> };
      return typeof j.networks === 'object' && j.networks !== null ? j.networks : {};
    } catch {
      return {};
    }
  }
}
