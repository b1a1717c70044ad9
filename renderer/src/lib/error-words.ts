/**
 * The proxy's stable error codes (proxy/errors.ts) in words a person reads.
 * Code branches on the code, never on message text; the UI shows these
 * words everywhere a code would appear (log detail, events, the resolver
 * switch), with the code kept beside them for a bug report.
 */
const WORDS: Readonly<Record<string, string>> = {
  DOTSTUB_CONNECT_TIMEOUT: 'the resolver didn’t answer the connection in time',
  DOTSTUB_CONNECT_FAILED: 'couldn’t connect to the resolver',
  DOTSTUB_CERTIFICATE: 'the resolver’s certificate isn’t valid for its name',
  DOTSTUB_PIN_MISMATCH: 'the resolver’s key doesn’t match its pinned key',
  DOTSTUB_CONNECTION_CLOSED: 'the connection to the resolver closed before the answer came',
  DOTSTUB_QUERY_TIMEOUT: 'the resolver took too long to answer',
  DOTSTUB_IN_FLIGHT_CAP: 'too many queries were waiting at once',
  DOTSTUB_POOL_CLOSED: 'the resolver was being switched or dotstub was stopping',
  DOTSTUB_QUARANTINED: 'the resolver is paused after repeated failures',
  DOTSTUB_MALFORMED: 'the resolver sent an answer that couldn’t be read',
  DOTSTUB_QUESTION_MISMATCH: 'the resolver answered a different question',
  DOTSTUB_CAPTIVE_HELD: 'held while you sign in to this network: only the sign-in page’s names are looked up',
  DOTSTUB_CLEARTEXT_FAILED: 'the network’s own resolver didn’t answer',
  DOTSTUB_INTERNAL: 'something went wrong inside dotstub',
};

/** Words for a code; an unknown code (a newer proxy) is shown as itself rather than hidden. */
export function errorWords(code: string): string {
  return WORDS[code] ?? code;
}

/** "couldn’t connect to the resolver (DOTSTUB_CONNECT_FAILED)": words first, the code for a bug report. */
export function errorText(code: string): string {
  const words = WORDS[code];
  return words === undefined ? code : `${words} (${code})`;
}
