/** The captive-portal part of the control API: the sign-in window's details, and the user's answers. */
import type { StubProxy } from '../dotstub.js';
import type { SignInView } from './api-types.js';
import { ApiFailure, validationFailure } from './errors.js';

/**
 * What the desktop app's "Sign in to network" window needs: the portal's
 * page and the loopback proxy (with its credential) that resolves through
 * the network, for that window's session only. 409 unless signing in is allowed now.
 */
export function signIn(proxy: StubProxy): SignInView {
  const c = proxy.captive;
  const signInProxy = proxy.signInProxy;
  if (!c || c.exception !== 'active' || !signInProxy) throw new ApiFailure(409, 'conflict', c ? `signing in is not allowed right now (${c.exception})` : 'no captive portal is being signed in to');
  return { portalUrl: c.portalUrl, proxy: signInProxy };
}

/** `{ action: "allow" | "decline" | "extend" | "check", remember?: boolean }`, carried out; 409 with the reason when there is nothing to do. */
export function captiveAction(proxy: StubProxy, raw: unknown): void {
  const body = (typeof raw === 'object' && raw !== null ? raw : {}) as { action?: unknown; remember?: unknown };
  const actions = ['allow', 'decline', 'extend', 'check'] as const;
  const action = actions.find((a) => a === body.action);
  if (!action) throw validationFailure({ action: 'action must be "allow", "decline", "extend" or "check"' });
  if (body.remember !== undefined && typeof body.remember !== 'boolean') throw validationFailure({ remember: 'remember must be true or false' });
  if (proxy.captiveAction(action, body.remember === true)) return;
  const why = proxy.captive
    ? action === 'extend'
      ? 'the sign-in window is not open, or already at its 15-minute limit'
      : `the sign-in exception is already ${proxy.captive.exception}`
    : action === 'check'
      ? 'portal checks are off, or one is running'
      : 'no captive portal is being signed in to';
  throw new ApiFailure(409, 'conflict', `nothing to ${action}: ${why}`);
}
