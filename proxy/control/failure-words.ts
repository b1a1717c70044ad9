/**
 * A connect failure's kind (network/classify.ts) in a few words, for places
 * with room for a phrase, not a sentence: "didn't answer (connection
 * refused)", "unreachable: connection refused at 23:05". Pure data, no
 * imports: the renderer imports it too.
 */
const SHORT: Readonly<Record<string, string>> = {
  refused: 'connection refused',
  dropped: 'no answer on its port',
  unreachable: 'no route to it',
  'reset-after-hello': 'connection reset during the handshake',
  'handshake-stall': 'the handshake never finished',
  intercepted: 'its certificate did not verify',
  'name-mismatch': 'its certificate is for another name',
  resigned: 'its pinned key was replaced',
  'not-tls': 'not an encrypted DNS server',
  timeout: 'no answer in time',
};

export function failureShort(kind: string | null | undefined): string {
  return (kind && SHORT[kind]) ?? 'no answer';
}
