/** POST /api/retry's answer: what "Retry now" did, in words. */
import type { RetryOutcome } from '../upstream/managed.js';
import type { RetryView } from './api-types.js';

export function retryView(label: string, outcome: RetryOutcome): RetryView {
  const message = {
    started: `trying ${label} now`,
    connected: `${label} is connected: nothing to retry`,
    connecting: `an attempt to reach ${label} is already under way`,
    scheduled: `trying ${label} within a second (it was tried moments ago)`,
    closed: 'dotstub is not forwarding DNS',
  }[outcome];
  return { started: outcome === 'started' || outcome === 'scheduled', outcome, message };
}
