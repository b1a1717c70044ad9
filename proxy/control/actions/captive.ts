/** The captive-portal part of the control API: the sign-in window's details, and the user's answers. */
import type { StubProxy } from '../../dotstub.js';
import type { SignInView } from '../api-types.js';
import { ApiFailure } from '../errors.js';
import { lazily, parseBody } from './body.js';

const ACTIONS = ['allow', 'decline', 'extend', 'check'] as const;

/** `{ action: "allow" | "decline" | "extend" | "check", remember?: boolean }` */
const captiveBody = lazily((z) =>
  z.strictObject({
    action: z.enum(ACTIONS, { error: 'action must be "allow", "decline", "extend" or "check"' }),
    remember: z.boolean({ error: 'remember must be true or false' }).optional(),
  }),
);

/**
 * What the desktop app's "Sign in to network" window needs: the portal's
 * page and the loopback proxy (with its credential) that resolves through
 * the network, for that window's session only. 409 sign_in_not_allowed unless signing in is allowed now.
 */
export function signIn(proxy: StubProxy): SignInView {
  const c = proxy.privacy.captive;
  const signInProxy = proxy.privacy.signInProxy;
  if (!c || c.exception !== 'active' || !signInProxy) {
    throw new ApiFailure('sign_in_not_allowed', c ? `signing in is not allowed right now (${c.exception})` : 'no captive portal is being signed in to');
  }
  return { portalUrl: c.portalUrl, proxy: signInProxy };
}

/** The user's answer to a captive portal, carried out; 409 captive_nothing_to_do with the reason when there is nothing to do. */
export function captiveAction(proxy: StubProxy, raw: unknown): void {
  const { action, remember } = parseBody(captiveBody(), raw, '{"action": "allow"}');
  if (proxy.privacy.captiveAction(action, remember === true)) return;
  const why = proxy.privacy.captive
    ? action === 'extend'
      ? 'the sign-in window is not open, or already at its 15-minute limit'
      : `the sign-in exception is already ${proxy.privacy.captive.exception}`
    : action === 'check'
      ? 'portal checks are off, or one is running'
      : 'no captive portal is being signed in to';
  throw new ApiFailure('captive_nothing_to_do', `nothing to ${action}: ${why}`);
}
