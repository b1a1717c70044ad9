/**
 * How strictly a resolver's TLS server is authenticated, as the root
 * configures it for DoT and DoH alike (connection/tls.ts applies it).
 */

export type AuthMode = 'strict' | 'opportunistic';

export interface AuthPolicy {
  readonly mode: AuthMode;
  /** Extra trust anchors (PEM), added to the system store. */
  readonly ca: readonly (string | Buffer)[];
}
