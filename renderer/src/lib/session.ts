/**
 * How the dashboard signs in (issue 13). The link dotstub prints is
 * `http://127.0.0.1:PORT/#token=…`: the fragment is never sent to a server,
 * so the token reaches only this page. The page keeps it in sessionStorage
 * (scoped to this origin, port included, and to this tab), takes it out of
 * the address bar, and sends it as `Authorization: Bearer` on every call.
 * There is no cookie: nothing the browser would attach to requests for
 * other servers on 127.0.0.1.
 *
 * Pure: the caller passes the hash and the stored value and applies the result.
 */

/** The sessionStorage key holding the token. */
export const TOKEN_KEY = 'dotstub.token';

/** What the server issues: 32 random bytes, base64url (proxy/control/auth.ts). */
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export type SignIn =
  /** A token to use; `store` says whether to (re)save it; `hash` is the address bar's new fragment, if it must change. */
  | { readonly kind: 'token'; readonly token: string; readonly store: boolean; readonly hash: string | null }
  /** No token in the link or this tab's storage. */
  | { readonly kind: 'missing'; readonly hash: string | null }
  /** The link carried something that isn't a dotstub token (cut short when copied?). */
  | { readonly kind: 'malformed'; readonly hash: string | null };

/**
 * The sign-in state for a page load: a `#token=…` fragment wins over a
 * stored token (it is the newer link) and is always removed from the
 * address bar, valid or not. The route that may follow it
 * (`#token=…&/queries`) is kept.
 */
export function signIn(hash: string, stored: string | null): SignIn {
  const m = /^#token=([^&]*)(?:&(.*))?$/.exec(hash);
  if (!m) {
    if (stored !== null && TOKEN_FORMAT.test(stored)) return { kind: 'token', token: stored, store: false, hash: null };
    return { kind: 'missing', hash: null };
  }
  const rest = m[2] ?? '';
  const clean = rest.startsWith('/') ? `#${rest}` : '#/';
  let token: string;
  try {
    token = decodeURIComponent(m[1] ?? '');
  } catch {
    return { kind: 'malformed', hash: clean };
  }
  if (!TOKEN_FORMAT.test(token)) return { kind: 'malformed', hash: clean };
  return { kind: 'token', token, store: true, hash: clean };
}

/** The Authorization header value for a token. */
export function bearer(token: string): string {
  return `Bearer ${token}`;
}
