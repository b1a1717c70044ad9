/**
 * The proxy's stable error codes (proxy/errors.ts) in words a person reads,
 * from the product's vocabulary (proxy/error-codes.ts). Code branches on the
 * code, never on message text; the UI shows these words everywhere a code
 * would appear (log detail, events, the resolver switch), with the code kept
 * beside them for a bug report.
 */
import { PROXY_ERROR_WORDS } from '../../../proxy/error-codes.js';

const WORDS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(PROXY_ERROR_WORDS).map(([code, w]) => [code, w.sentence]));

/** Words for a code; an unknown code (a newer proxy) is shown as itself rather than hidden. */
export function errorWords(code: string): string {
  return WORDS[code] ?? code;
}

/** "couldn’t connect to the resolver (DOTSTUB_CONNECT_FAILED)": words first, the code for a bug report. */
export function errorText(code: string): string {
  const words = WORDS[code];
  return words === undefined ? code : `${words} (${code})`;
}
