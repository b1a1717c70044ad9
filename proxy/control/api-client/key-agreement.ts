/**
 * A connection's key agreement in words (proxy/upstream/connection/key-agreement.ts):
 * the group the handshake agreed, and why only classical groups were offered.
 * One owner for these sentences: the dashboard's Connections page and Events,
 * and the CLI's log, say them from here.
 */
import type { ConnectionView } from '../api-types.js';

/** "X25519MLKEM768 (post-quantum hybrid)", "X25519 (classical)"; null when the TLS library didn't say. */
export function keyGroupWords(group: string | null): string | null {
  if (group === null) return null;
  return `${group} (${/MLKEM|KYBER/i.test(group) ? 'post-quantum hybrid' : 'classical'})`;
}

/** Why the connection offered classical key agreement only; null: the TLS library's own offer. */
export function classicalWords(why: ConnectionView['classicalOnly']): string | null {
  if (why === 'retried') return 'the post-quantum ClientHello got no answer on this network; classical key agreement';
  if (why === 'network') return 'a post-quantum ClientHello got no answer on this network within the last day; classical key agreement';
  return null;
}
