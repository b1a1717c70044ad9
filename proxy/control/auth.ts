/**
 * The control API's token.
 *
 * - The token is 32 random bytes (base64url), created at first start in the
 *   config dir with mode 0600, so only this user can read it.
 * - Every /api call carries it as `Authorization: Bearer <token>`: scripts,
 *   the desktop app and the dashboard alike. There is no cookie and no other
 *   credential (issue 13): browsers send cookies to every port of a host, so
 *   a cookie set by the dashboard reached any other server on 127.0.0.1 the
 *   browser visited, and a non-browser client could replay it with a forged
 *   Origin. A header is only ever sent by code that chose to send it.
 * - The dashboard gets the token in the link's fragment
 *   (`http://127.0.0.1:PORT/#token=…`), which browsers never send to a
 *   server; the page keeps it in sessionStorage (scoped to this origin, port
 *   included) and removes it from the address bar.
 *
 * Invariant: every comparison is constant-time over equal-length digests.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { setAsideSync, writeFileAtomicSync } from '../files/config-file.js';
import { ConfigError } from '../errors.js';

const TOKEN_FILE = 'token';
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export interface LoadedToken {
  readonly token: string;
  readonly file: string;
  readonly created: boolean;
  /** Things fixed on the way (permissions tightened, a bad file replaced), for the log. */
  readonly notes: readonly string[];
}

function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Reads the token from `dir/token`, creating it (0600) at first start. */
export function loadOrCreateToken(dir: string): LoadedToken {
  const file = path.join(dir, TOKEN_FILE);
  const notes: string[] = [];
  let text: string | undefined;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ConfigError(`cannot read the control token ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { cause: err });
    }
  }
  if (text !== undefined && TOKEN_FORMAT.test(text)) {
    if (process.platform !== 'win32' && (fs.statSync(file).mode & 0o077) !== 0) {
      fs.chmodSync(file, 0o600);
      notes.push(`${file} was readable by other users; permissions set to 0600`);
    }
    return { token: text, file, created: false, notes };
  }
  if (text !== undefined) {
    // A token file we can't use is replaced (it only guards this API): the old
    // dashboard link stops working, which the note says.
    setAsideSync(file);
    notes.push(`${file} did not hold a valid token; made a new one (old dashboard links stop working)`);
  }
  const token = newToken();
  writeFileAtomicSync(file, token + '\n', 0o600);
  return { token, file, created: true, notes };
}

function digest(value: string): Buffer {
  return crypto.createHash('sha256').update(value).digest();
}

/** Constant-time string equality (hashing first makes the lengths equal). */
export function safeEqual(a: string, b: string): boolean {
  return crypto.timingSafeEqual(digest(a), digest(b));
}

/** The `/#token=…` link that signs the dashboard in at `origin` (e.g. http://127.0.0.1:5380). */
export function dashboardLink(origin: string, token: string): string {
  return `${origin}/#token=${encodeURIComponent(token)}`;
}

/** The request carries the token as `Authorization: Bearer <token>` (the only credential accepted). */
export function isAuthenticated(req: IncomingMessage, token: string): boolean {
  const auth = req.headers.authorization;
  if (auth === undefined) return false;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  return m !== null && safeEqual(m[1] as string, token);
}
