/**
 * The local-names part of the control API (issue 21): which names the
 * network's links own and where they go, and the user's choice for this
 * network — send its local names (`printer.lan`, a VPN's intranet) to the
 * link's own resolver, unencrypted, or never. Remembered per network.
 */
import type { StubProxy } from '../../dotstub.js';
import type { LocalNamesView } from '../../engine/router.js';
import { ApiFailure } from '../errors.js';
import { lazily, parseBody } from './body.js';

/** `{ "allow": true | false }` */
const localNamesBody = lazily((z) =>
  z.strictObject({ allow: z.boolean({ error: 'allow must be true (send this network’s local names to its own resolver) or false (never)' }) }),
);

const ROUTING_OFF = 'routing by name owner is off in this dotstub (DOTSTUB_NAME_ROUTING=off): every name goes to the chosen resolver';

/** What the Network view shows; 404 when routing by name owner is off. */
export function localNamesView(proxy: StubProxy): LocalNamesView {
  const routing = proxy.routing;
  if (!routing) throw new ApiFailure('name_routing_off', ROUTING_OFF);
  return routing.view();
}

/** `{ "allow": true | false }`: the user's choice for the network we're on, remembered for it. */
export function setLocalNames(proxy: StubProxy, raw: unknown): LocalNamesView {
  const routing = proxy.routing;
  if (!routing) throw new ApiFailure('name_routing_off', ROUTING_OFF);
  const { allow } = parseBody(localNamesBody(), raw, '{"allow": true}');
  if (!routing.setLocalNames(allow ? 'allow' : 'deny')) {
    throw new ApiFailure('network_unknown', 'this network cannot be told apart (no gateway found), so a choice for it cannot be remembered');
  }
  return routing.view();
}
