/**
 * The control API's token and the dashboard's session cookie.
 *
 * - The token is 32 random bytes (base64url), created at first start in the
 *   config dir with mode 0600, so only this user can read it.
 * - Scripts send it as `Authorization: Bearer <token>`.
 * - The dashboard gets a cookie instead: `GET /?token=<token>` sets
 *   `dotstub_session` (HttpOnly, SameSite=Strict) and redirects to `/`, so the
 *   token leaves the address bar and history at once and page scripts never
 *   see it. The cookie's value is HMAC(token, label), not the token: a cookie
 *   read from the browser's store is not the token for scripts, and it stays
 *   valid across proxy restarts exactly as long as the token does.
 *
 * Invariant: every comparison is constant-time over equal-length digests.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { writeFileAtomicSync } from '../config/config-file.js';
import { ConfigError } from '../errors.js';

export const TOKEN_FILE = 'token';
export const SESSION_COOKIE = 'dotstub_session';
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export interface LoadedToken {
  readonly token: string;
  readonly file: string;
  readonly created: boolean;
  /** Things fixed on the way (permissions tightened, a bad file replaced), for the log. */
  readonly notes: readonly string[];
}

export function newToken(): string {
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
    fs.renameSync(file, `${file}.rejected-${Date.now()}`);
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

export function sessionValue(token: string): string {
  return crypto.createHmac('sha256', token).update('dotstub dashboard session v1').digest('base64url');
}

export function sessionCookie(token: string): string {
  // No Max-Age: a session cookie, gone when the browser closes; no Secure:
  // plain HTTP on loopback. SameSite=Strict keeps other sites' pages from
  // sending it; other loopback ports are the same site, which the Origin
  // check covers.
  return `${SESSION_COOKIE}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict`;
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    if (!out.has(k)) out.set(k, part.slice(eq + 1).trim());
  }
  return out;
}

/** The request carries the token (Bearer header) or a valid session cookie. */
export function isAuthenticated(req: IncomingMessage, token: string): boolean {
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m !== null && safeEqual(m[1] as string, token);
  }
  const cookie = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
  return cookie !== undefined && safeEqual(cookie, sessionValue(token));
}
