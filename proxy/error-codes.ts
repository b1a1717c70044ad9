/**
 * The product's error vocabulary, written once: every refusal the control
 * API answers with, every failure its clients (the desktop app, the
 * dashboard) meet on the way to it, and the sub-codes a bad field gets.
 * Each has a stable code (code branches on it, never on message text), a
 * plain sentence and what to do about it.
 *
 * A thrown error's `message` says what happened this time ("unknown resolver
 * "x""); `hint` says what the user can do, from here unless the thrower knows
 * better. The proxy's own typed errors (errors.ts: DOTSTUB_*), the system-DNS
 * layer's (system-dns/errors.ts: SYSDNS_*) and the network's classification
 * (network/classify.ts: NET_*) keep their codes, which reach logs, events and
 * scripts; the API turns the ones a request can meet into a code of this table
 * (control/actions/system-dns.ts), and PROXY_ERROR_WORDS below is what the UI
 * says for the ones shown in events and the query log.
 *
 * Pure data, no imports: the proxy, the app (app/) and the dashboard
 * (renderer/) all import it.
 */

export interface ErrorWords {
  /** HTTP status the API answers with (API codes only). */
  readonly status: number;
  /** What went wrong, in general terms (the thrown message is specific). */
  readonly sentence: string;
  /** What to do about it. */
  readonly hint: string;
}

/** Every code the control API answers with, or its clients meet calling it. */
export const API_ERRORS = {
  // The request itself.
  bad_request: { status: 400, sentence: 'The request could not be read.', hint: 'Send a JSON object with Content-Type: application/json (see the API list in proxy/control/api-client/endpoints.ts).' },
  validation: { status: 400, sentence: 'A field of the request is wrong; nothing was changed.', hint: 'Correct the field named in `field` (every field at fault is in `fields`) and send it again.' },
  too_large: { status: 413, sentence: 'The request body is too large.', hint: 'Send at most 64 KiB.' },
  unsupported_media_type: { status: 415, sentence: 'The request body is not JSON.', hint: 'Send the body as JSON with Content-Type: application/json.' },
  method_not_allowed: { status: 405, sentence: 'That method is not allowed on this path.', hint: 'Check the method against the API list in proxy/control/api-client/endpoints.ts.' },
  not_found: { status: 404, sentence: 'There is no such API endpoint.', hint: 'Check the path against the API list in proxy/control/api-client/endpoints.ts.' },
  // Who may ask.
  unauthorized: { status: 401, sentence: 'The token is missing or wrong.', hint: 'Open the dashboard link dotstub printed, or send "Authorization: Bearer <token>" (the token is in the config dir).' },
  forbidden_origin: { status: 403, sentence: 'Requests from other web pages are refused.', hint: 'Use the dashboard dotstub serves; from a script, add the dashboard\'s Origin header to changes.' },
  dashboard_unavailable: { status: 503, sentence: 'The browser dashboard is not served: its port is held by another program.', hint: 'Find the program with "ss -ltnp", stop it and restart dotstub; or start dotstub with --control-any-port to serve the dashboard on a free port.' },
  bad_host: { status: 403, sentence: 'This address is not this machine\'s dotstub.', hint: 'Use the loopback address dotstub printed, e.g. http://127.0.0.1:5380.' },
  // Resolvers.
  unknown_resolver: { status: 404, sentence: 'No resolver has that id.', hint: 'Use an id from GET /api/resolvers.' },
  resolver_limit: { status: 409, sentence: 'There are as many custom resolvers as dotstub keeps.', hint: 'Remove a custom resolver first.' },
  resolver_is_preset: { status: 409, sentence: 'Preset resolvers can\'t be removed.', hint: 'Pick another resolver instead; only custom ones can be removed.' },
  resolver_in_use: { status: 409, sentence: 'That resolver is the one in use.', hint: 'Switch to another resolver first, then remove it.' },
  resolver_unverifiable: { status: 409, sentence: 'Strict mode can\'t verify that resolver: it has no authentication name or pin.', hint: 'Add its TLS name or an SPKI pin, or switch to opportunistic mode in Settings.' },
  // Captive portals.
  sign_in_not_allowed: { status: 409, sentence: 'Signing in to a network is not allowed right now.', hint: 'Choose "Allow sign-in" on the captive-portal card first.' },
  captive_nothing_to_do: { status: 409, sentence: 'There is nothing to answer about a captive portal now.', hint: 'Check the status: the portal may be gone, or this answer already given.' },
  // Networks.
  network_unknown: { status: 409, sentence: 'This network can\'t be told apart from others, so a choice for it can\'t be remembered.', hint: 'Connect to a network with a gateway and try again.' },
  networks_not_remembered: { status: 404, sentence: 'This dotstub remembers no networks.', hint: 'Start dotstub with a config directory (the service and the app have one).' },
  unknown_network: { status: 404, sentence: 'No remembered network has that key.', hint: 'Use a key from GET /api/networks; it may have been forgotten already.' },
  name_routing_off: { status: 404, sentence: 'Routing names to the network that owns them is off in this dotstub.', hint: 'Start dotstub without DOTSTUB_NAME_ROUTING=off.' },
  // System DNS.
  system_dns_not_managed: { status: 404, sentence: 'This dotstub does not manage the system\'s DNS.', hint: 'Start it with --system-dns (the dotstub service does), or use "dotstub system-dns enable".' },
  needs_root: { status: 403, sentence: 'Changing the system\'s DNS needs root.', hint: 'Run with sudo, or install the dotstub service.' },
  system_dns_already_enabled: { status: 409, sentence: 'Another dotstub already holds the system\'s DNS.', hint: 'Stop the other dotstub first, or use the one running.' },
  system_dns_not_enabled: { status: 409, sentence: 'The system\'s DNS is not pointed at dotstub, so there is nothing to pause or give back.', hint: 'Turn system DNS on first.' },
  system_dns_unavailable: { status: 409, sentence: 'The way dotstub changes the system\'s DNS is not available on this machine.', hint: 'Read the message for what is missing (e.g. systemd-resolved not running).' },
  system_dns_failed: { status: 500, sentence: 'Changing or restoring the system\'s DNS failed part-way.', hint: 'Read the message for what was left as it was; "dotstub system-dns restore" retries the restore.' },
  leak_test_running: { status: 409, sentence: 'A leak test is already running.', hint: 'Wait for it to finish (a few seconds).' },
  // dotstub itself.
  internal: { status: 500, sentence: 'Something went wrong inside dotstub.', hint: 'See the dotstub log (journalctl -u dotstub, or the terminal it runs in).' },
} as const satisfies Readonly<Record<string, ErrorWords>>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/** What a client of the API meets before (or instead of) an API answer: no status of its own. */
const CLIENT_ERRORS = {
  unreachable: { sentence: 'The dotstub proxy is not answering.', hint: 'Is it still running? The app restarts it; otherwise start dotstub again.' },
  timeout: { sentence: 'The dotstub proxy did not answer in time.', hint: 'It may be busy or stuck; try again, and see its log if it keeps happening.' },
  aborted: { sentence: 'The call was cancelled.', hint: 'Nothing to do: it was stopped on purpose.' },
  bad_response: { sentence: 'The dotstub proxy answered with something that is not its API.', hint: 'Is another program listening on dotstub\'s port? Restart dotstub.' },
  signed_out: { sentence: 'This page has no token.', hint: 'Open the dashboard from the link dotstub printed, or from the desktop app.' },
  http: { sentence: 'The dotstub proxy answered with an error it did not explain.', hint: 'See the dotstub log.' },
} as const satisfies Readonly<Record<string, Omit<ErrorWords, 'status'>>>;

type ClientErrorCode = keyof typeof CLIENT_ERRORS;

/** Any code a caller of the API can see on an error. */
export type ControlErrorCode = ApiErrorCode | ClientErrorCode;

/**
 * What is wrong with one field of a request body, for forms and tests:
 * - required: missing
 * - wrong_type: present but not the right kind of value (text, number, true/false, list)
 * - out_of_range: a number or length beyond its bounds
 * - bad_value: the right kind, but not a value that works (an address that isn't one, an unknown choice)
 * - unknown_field: a field the endpoint doesn't take
 * - taken: another resolver already has it
 * - not_allowed: fine on its own, but not with the rest (e.g. strict mode and no way to verify)
 */
export type FieldCode = 'required' | 'wrong_type' | 'out_of_range' | 'bad_value' | 'unknown_field' | 'taken' | 'not_allowed';

/** The part of a zod issue the field code depends on (zod is not imported here). */
export interface IssueLike {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly keys?: readonly string[];
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const k of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** A zod issue's field code; `raw` is the value parsed (zod issues carry no input by default). */
function fieldCodeOf(issue: IssueLike, raw: unknown): FieldCode {
  switch (issue.code) {
    case 'invalid_type':
      return valueAt(raw, issue.path) === undefined ? 'required' : 'wrong_type';
    case 'too_small':
    case 'too_big':
      return 'out_of_range';
    case 'unrecognized_keys':
      return 'unknown_field';
    default:
      return 'bad_value';
  }
}

/** Field → code for zod issues, keyed as config-file.ts's issueFields keys the messages ('(body)' for the whole body). */
export function issueCodes(issues: readonly IssueLike[], raw: unknown): Record<string, FieldCode> {
  const codes: Record<string, FieldCode> = {};
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys ?? []) codes[[...issue.path.map(String), key].join('.')] ??= 'unknown_field';
      continue;
    }
    codes[issue.path.map(String).join('.') || '(body)'] ??= fieldCodeOf(issue, raw);
  }
  return codes;
}

/** The sentence and hint for any code of this table; an unknown code (a newer proxy) gets a neutral pair. */
export function errorWordsOf(code: string): { readonly sentence: string; readonly hint: string } {
  return (
    (API_ERRORS as Readonly<Record<string, ErrorWords>>)[code] ??
    (CLIENT_ERRORS as Readonly<Record<string, Omit<ErrorWords, 'status'>>>)[code] ??
    PROXY_ERROR_WORDS[code] ?? { sentence: `dotstub reported ${code}.`, hint: 'See the dotstub log.' }
  );
}

/**
 * The proxy's own failure codes (errors.ts) as a person reads them: shown
 * wherever a query or connection failed (log detail, events, the resolver
 * switch), with the code beside them for a bug report.
 */
export const PROXY_ERROR_WORDS: Readonly<Record<string, { readonly sentence: string; readonly hint: string }>> = {
  DOTSTUB_CONNECT_TIMEOUT: { sentence: 'the resolver didn’t answer the connection in time', hint: 'Its port may be blocked on this network; dotstub retries, and falls back to DNS-over-HTTPS where the resolver has it.' },
  DOTSTUB_CONNECT_FAILED: { sentence: 'couldn’t connect to the resolver', hint: 'Check the network, or pick another resolver.' },
  DOTSTUB_CERTIFICATE: { sentence: 'the resolver’s certificate isn’t valid for its name', hint: 'Something on this network may be intercepting TLS; try another network or resolver.' },
  DOTSTUB_PIN_MISMATCH: { sentence: 'the resolver’s key doesn’t match its pinned key', hint: 'Update the pin if the resolver changed its key; otherwise this network is intercepting.' },
  DOTSTUB_CONNECTION_CLOSED: { sentence: 'the connection to the resolver closed before the answer came', hint: 'dotstub reconnects by itself; ask again.' },
  DOTSTUB_QUERY_TIMEOUT: { sentence: 'the resolver took too long to answer', hint: 'Ask again; if it keeps happening, pick a faster resolver.' },
  DOTSTUB_IN_FLIGHT_CAP: { sentence: 'too many queries were waiting at once', hint: 'Raise the in-flight limit or the pool size in Settings.' },
  DOTSTUB_POOL_CLOSED: { sentence: 'the resolver was being switched or dotstub was stopping', hint: 'Ask again.' },
  DOTSTUB_QUARANTINED: { sentence: 'the resolver is paused after repeated failures', hint: 'It is tried again by itself; "Retry now" tries at once.' },
  DOTSTUB_MALFORMED: { sentence: 'the resolver sent an answer that couldn’t be read', hint: 'Ask again; if it keeps happening, pick another resolver.' },
  DOTSTUB_QUESTION_MISMATCH: { sentence: 'the resolver answered a different question', hint: 'The answer was dropped; ask again.' },
  DOTSTUB_CAPTIVE_HELD: { sentence: 'held while you sign in to this network: only the sign-in page’s names are looked up', hint: 'Finish signing in; lookups go private again after.' },
  DOTSTUB_CLEARTEXT_FAILED: { sentence: 'the network’s own resolver didn’t answer', hint: 'Check the network connection.' },
  DOTSTUB_INTERNAL: { sentence: 'something went wrong inside dotstub', hint: 'See the dotstub log.' },
};
