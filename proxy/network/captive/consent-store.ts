/**
 * Strict mode's "Allow sign-in?" answers per network, in a small JSON file
 * (mode 0600, its directory 0700), keyed by network-key.ts's hash:
 *
 *   { "version": 1, "networks": { "<key>": "allow" | "decline" } }
 *
 * Written with the project's one atomic write (config/config-file.ts: temp
 * file, fsync, rename, fsync the directory), so a crash leaves the old
 * answers or the new ones. A file that can't be read counts as no answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomicSync } from '../../files/config-file.js';

export type ConsentAnswer = 'allow' | 'decline';

export class ConsentStore {
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  get(key: string): ConsentAnswer | undefined {
    const v = this.#read()[key];
    return v === 'allow' || v === 'decline' ? v : undefined;
  }

  set(key: string, answer: ConsentAnswer): void {
    const networks = { ...this.#read(), [key]: answer };
    fs.mkdirSync(path.dirname(this.#file), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(this.#file, JSON.stringify({ version: 1, networks }, null, 2) + '\n', 0o600);
  }

  /** Forgets the answer for one network ("Forget this network"); false when there was none. */
  forget(key: string): boolean {
    const all = this.#read();
    if (!(key in all)) return false;
    delete all[key];
    writeFileAtomicSync(this.#file, JSON.stringify({ version: 1, networks: all }, null, 2) + '\n', 0o600);
    return true;
  }

  #read(): Record<string, unknown> {
    try {
      const j = JSON.parse(fs.readFileSync(this.#file, 'utf8')) as { networks?: Record<string, unknown> };
      return j.networks ?? {};
    } catch {
      return {};
    }
  }
}
