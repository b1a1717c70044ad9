/**
 * Nothing outside the query path can end the proxy (DESIGN.md; issue 41).
 * Every check that stands beside the query path — the interception check,
 * DDR's question, the portal check, the leak watch's reading, the warm-up —
 * runs its measurement through sideCheck(), which settles with the value or
 * with why nothing could be checked, whichever way the measurement failed:
 *
 *   - it threw, synchronously;
 *   - its promise rejected;
 *   - an exception escaped from a callback of its own I/O (a throw inside a
 *     socket callback, as ask-udp's did on an IPv4-only network; an 'error'
 *     event nobody listened for). Such an exception reaches only the
 *     process's 'uncaughtException' / 'unhandledRejection' handler; the
 *     callback ran in the async context the check started it in
 *     (AsyncLocalStorage), so the handler (cli.ts, through
 *     failSideCheck) finds the check and fails it instead of the process.
 *
 * An exception from no check's context is the fail-safe stop's (cli.ts).
 *
 * Invariant: the check's context never spreads into the query path. The
 * outcome is delivered to code that registered for it outside the context
 * (the caller's `await` or `.then`), so whatever that code starts (a switch
 * of resolver, a captive session, a write to the network's memory) belongs
 * to no check, and an exception there is never taken for a check's failure.
 * A measurement starts nothing the query path keeps.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { errnoWords } from '../dns/ask-udp.js';

export type SideCheckOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly why: string };

interface Scope {
  readonly name: string;
  fail(err: unknown): void;
}

const scopes = new AsyncLocalStorage<Scope>();

/** A failure in the few words a card shows: the message, and the code where the message doesn't carry it ("no route to it from this network (ENETUNREACH)"). */
function errorWords(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const words = errnoWords(err);
  return code !== undefined && !words.includes(code) ? `${words} (${code})` : words;
}

/** Runs `measure` as the side check `name`; never rejects, never throws (see the header). */
export function sideCheck<T>(name: string, measure: () => Promise<T>): Promise<SideCheckOutcome<T>> {
  return new Promise<SideCheckOutcome<T>>((resolve) => {
    let settled = false;
    const settle = (o: SideCheckOutcome<T>): void => {
      if (settled) return;
      settled = true;
      resolve(o);
    };
    const fail = (err: unknown): void => settle({ ok: false, why: errorWords(err) });
    scopes.run({ name, fail }, () => {
      try {
        measure().then((value) => settle({ ok: true, value }), fail);
      } catch (err) {
        fail(err);
      }
    });
  });
}

/**
 * For the process's last-resort handlers: the side check `err` escaped from,
 * now failed with it (its name, to say so), or null when it came from no
 * check (the fail-safe stop's to handle).
 */
export function failSideCheck(err: unknown): string | null {
  const scope = scopes.getStore();
  if (scope === undefined) return null;
  scope.fail(err);
  return scope.name;
}
