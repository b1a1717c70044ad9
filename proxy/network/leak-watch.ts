/**
 * The leak counter that doesn't lie (issue 21 item 4; docs/architecture.md#rules-every-part-keeps:
 * a number or a "none seen" on screen is a measurement, never a default): reads the
 * OS's DNS state at start, on every network change and whenever resolv.conf
 * is written, and lists the paths a lookup could take around dotstub now:
 *
 *   - a resolv.conf `nameserver` other than dotstub (an IPv6 RDNSS server
 *     added by the OS, the LAN's resolver, a local forwarder such as
 *     NetworkManager's dnsmasq at 127.0.1.1): glibc tries every one;
 *   - behind resolved's stub (127.0.0.53): a global server that isn't
 *     dotstub, a link carrying `~.` (it gets lookups for every name), and a
 *     suffix of glibc's search list (resolv.conf's `search`) that resolved
 *     routes to a link's own servers (resolved sends NAME.lan there itself,
 *     including a public name glibc glued `lan` onto). A routing-only domain
 *     outside the search list (`~corp.example`) is the link's own names:
 *     where they belong, not a leak.
 *
 * NetworkManager is covered through what it writes: resolv.conf (its
 * default mode, or dnsmasq's 127.0.1.1) or resolved's links.
 *
 * What it reports (LeakView): the paths now, each with a sentence (what,
 * which link, what to do); while there are none, since when none has been
 * seen and how many network changes were read since then. When the state
 * can't be read (no resolv.conf, resolved not answering on D-Bus, network
 * changes not watched) it says it did not measure, and why: never a figure.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { MANAGED_MARKER, parseResolvConf, RESOLVED_STUBS, STUB_ADDRESSES } from '../system-dns/resolv-conf.js';
import { CoalescedRead } from './coalesced-read.js';
import type { CurrentNetwork } from './current-network.js';
import { addressText, ifName, runCommand, type RunCommand } from './name-sources.js';
import { parseServer, readText, type DiscoveryPaths, type NetworkServer } from './network-resolver.js';
import { sideCheck } from '../runtime/side-check.js';

/** One way a lookup can go around dotstub now. */
export interface BypassPath {
  /** Short: `nameserver fd00:99::1`, `~. on wg0`, `search domain lan on veth0`. */
  readonly what: string;
  /** The link or file it is on: `resolv.conf`, `veth0`, `systemd-resolved (global)`. */
  readonly link: string;
  /** For people: what goes where, and what to do about it. */
  readonly sentence: string;
}

/** StatusView.leaks: whether lookups can go around dotstub, as measured (never a default). */
export interface LeakView {
  /** The OS's state was read, and network changes are watched: `paths` and the figures below are measurements. */
  readonly measured: boolean;
  /** Not measured: why, in words. */
  readonly why: string | null;
  /** The paths around dotstub found at the last reading. */
  readonly paths: readonly BypassPath[];
  /** While no path is found: since when every reading found none (ms since the epoch); null otherwise. */
  readonly cleanSince: number | null;
  /** Network changes read since `cleanSince` (each one re-read the OS's state). */
  readonly networkChanges: number;
  /** The last reading, ms since the epoch; null before the first. */
  readonly checkedAt: number | null;
}

type Reading = { readonly ok: true; readonly paths: BypassPath[] } | { readonly ok: false; readonly why: string };

const TO_FIX_ON = 'To fix: turn private DNS on for this machine (System DNS).';

function serverText(s: NetworkServer): string {
  return s.port === 53 ? s.host : net.isIPv6(s.host) ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;
}

function resolvConfPaths(file: string, nameservers: readonly string[], ours: (s: NetworkServer) => boolean, managed: boolean): { paths: BypassPath[]; viaResolved: boolean } {
  const paths: BypassPath[] = [];
  let viaResolved = false;
  const parsed = nameservers.map((n) => ({ text: n, server: parseServer(n) }));
  // dotstub's own file names only 127.0.0.1 (renderStubResolvConf), the address its takeover checks; any other line is someone else's.
  const isOurs = (n: { text: string; server: NetworkServer | null }): boolean => n.server !== null && (ours(n.server) || (managed && STUB_ADDRESSES.has(n.text)));
  const anyOurs = parsed.some(isOurs);
  for (const n of parsed) {
    if (n.server === null || isOurs(n)) continue;
    if (RESOLVED_STUBS.has(n.server.host)) {
      viaResolved = true;
      continue;
    }
    const host = n.server.host;
    const beside = anyOurs ? 'besides dotstub' : 'and not dotstub';
    const loopback = host.startsWith('127.') || host === '::1';
    const v6 = net.isIPv6(host.replace(/%.*$/, ''));
    const sentence = loopback
      ? `${file} names ${n.text}, a local forwarder dotstub doesn't control (NetworkManager's dnsmasq, or another stub), ${beside}: lookups sent there go around dotstub. ${anyOurs ? 'To fix: turn private DNS off and on again, and stop whatever adds it.' : TO_FIX_ON}`
      : v6
        ? `${file} names ${n.text}, an IPv6 resolver (usually added from the router's advertisements, RDNSS), ${beside}: programs may send lookups there unencrypted. ${anyOurs ? 'To fix: turn private DNS off and on again, and stop whatever adds it (rdnssd, or the link\'s IPv6 DNS setting).' : TO_FIX_ON}`
        : `${file} names ${n.text} ${beside}: programs may send lookups there unencrypted. ${anyOurs ? 'To fix: turn private DNS off and on again, and stop whatever adds it.' : TO_FIX_ON}`;
    paths.push({ what: `nameserver ${n.text}`, link: path.basename(file), sentence });
  }
  return { paths, viaResolved };
}

interface BusProperty<T> {
  readonly data: T;
}

const RESOLVE1 = ['org.freedesktop.resolve1', '/org/freedesktop/resolve1', 'org.freedesktop.resolve1.Manager'] as const;

/** resolved's servers per ifindex (0: global), with ports: DNSEx (a(iiayqs)) where resolved has it, else DNS (a(iiay), port 53). */
async function resolvedServers(run: RunCommand): Promise<Map<number, NetworkServer[]> | null> {
  const ex = await run(['busctl', '--json=short', 'get-property', ...RESOLVE1, 'DNSEx']);
  const plain = ex === null ? await run(['busctl', '--json=short', 'get-property', ...RESOLVE1, 'DNS']) : null;
  if (ex === null && plain === null) return null;
  const out = new Map<number, NetworkServer[]>();
  try {
    const rows = (JSON.parse((ex ?? plain) as string) as BusProperty<[number, number, number[], number?, string?][]>).data;
    for (const [ifindex, family, bytes, port] of rows) {
      const host = addressText(family, bytes);
      out.set(ifindex, [...(out.get(ifindex) ?? []), { host, port: port ? port : 53 }]);
    }
  } catch {
    return null;
  }
  return out;
}

/**
 * Link names by index, from the kernel as this process's network namespace
 * sees it (`ip -o link`), where sysfs may be another namespace's; sysfs when
 * `ip` can't be run.
 */
async function linkNames(run: RunCommand): Promise<(index: number) => string> {
  const text = await run(['ip', '-o', 'link', 'show']);
  const names = new Map<number, string>();
  for (const m of (text ?? '').matchAll(/^(\d+):\s+([^:@\s]+)/gm)) names.set(Number(m[1]), m[2] as string);
  return (index) => names.get(index) ?? ifName(index);
}

async function resolvedPaths(run: RunCommand, ours: (s: NetworkServer) => boolean, searchList: readonly string[]): Promise<Reading> {
  const servers = await resolvedServers(run);
  const domainsText = await run(['busctl', '--json=short', 'get-property', ...RESOLVE1, 'Domains']);
  if (servers === null || domainsText === null) {
    return { ok: false, why: 'resolv.conf points at systemd-resolved, but its settings could not be read (busctl get-property org.freedesktop.resolve1 failed)' };
  }
  let domains: [number, string, boolean][];
  try {
    domains = (JSON.parse(domainsText) as BusProperty<[number, string, boolean][]>).data;
  } catch {
    return { ok: false, why: 'systemd-resolved answered with Domains dotstub could not read' };
  }
  const paths: BypassPath[] = [];
  const nameOf = await linkNames(run);
  /** The link whose domain (search or routing-only, not ~.) matches `suffix` best; null: none (it goes to the global servers). */
  const ownerOf = (suffix: string): number | null => {
    let best: { ifindex: number; length: number } | null = null;
    for (const [ifindex, d] of domains) {
      const domain = d.toLowerCase().replace(/\.$/, '');
      if (ifindex === 0 || domain === '' || domain === '.') continue;
      if ((suffix === domain || suffix.endsWith(`.${domain}`)) && (best === null || domain.length > best.length)) best = { ifindex, length: domain.length };
    }
    return best?.ifindex ?? null;
  };
  // resolved lists a global loopback server (dotstub's drop-in) under the loopback link, which is never one of its own links.
  const isGlobal = (ifindex: number): boolean => ifindex === 0 || nameOf(ifindex) === 'lo';
  const global = [...servers].filter(([i]) => isGlobal(i)).flatMap(([, s]) => s);
  const foreignGlobal = global.filter((s) => !ours(s));
  if (!global.some(ours)) {
    const linkServers = [...servers].filter(([i]) => !isGlobal(i)).flatMap(([, s]) => s.map(serverText));
    paths.push({
      what: 'systemd-resolved not pointed at dotstub',
      link: 'systemd-resolved (global)',
      sentence: `systemd-resolved does not send lookups to dotstub: they go to ${[...foreignGlobal.map(serverText), ...linkServers].join(', ') || 'whatever resolved finds'} unencrypted. ${TO_FIX_ON}`,
    });
  } else {
    for (const s of foreignGlobal) {
      paths.push({
        what: `global server ${serverText(s)}`,
        link: 'systemd-resolved (global)',
        sentence: `systemd-resolved also sends lookups to ${serverText(s)} (its global DNS), besides dotstub: some go there unencrypted. To fix: remove it from resolved.conf's DNS= and its drop-ins.`,
      });
    }
  }
  for (const [ifindex, linkServers] of servers) {
    if (isGlobal(ifindex)) continue;
    const theirs = linkServers.filter((s) => !ours(s));
    if (theirs.length === 0) continue;
    const link = nameOf(ifindex);
    const list = theirs.map(serverText).join(', ');
    const own = domains.filter(([i]) => i === ifindex);
    if (own.some(([, d, routeOnly]) => routeOnly && (d === '.' || d === ''))) {
      paths.push({
        what: `~. on ${link}`,
        link,
        sentence: `${link} routes every domain (~.) to its own resolver ${list}: systemd-resolved sends some lookups there unencrypted instead of to dotstub. To fix: remove ~. from ${link}'s DNS domains (resolvectl domain ${link} …), or disconnect the VPN that set it.`,
      });
    }
    // glibc glues its search list (what resolv.conf says) onto names that failed, public ones included; resolved sends NAME.SUFFIX to the link whose domain matches SUFFIX best.
    const glued = searchList.filter((suffix) => ownerOf(suffix) === ifindex);
    if (glued.length > 0) {
      const names = glued.join(', ');
      paths.push({
        what: `search domain ${names} on ${link}`,
        link,
        sentence: `systemd-resolved sends names ending in ${names} straight to ${link}'s resolver ${list}, unencrypted and around dotstub, and the search list glues ${names} onto names that failed, public ones included. To fix: turn private DNS on for this machine with dotstub on port 53 (the dotstub service is): programs then ask dotstub itself, which sends ${link}'s own names there and answers the glued forms.`,
      });
    }
  }
  return { ok: true, paths };
}

/** One reading of the OS's state: the paths around dotstub, or why it couldn't be read. */
export async function readBypassPaths(paths: Pick<DiscoveryPaths, 'resolvConf'>, ours: (s: NetworkServer) => boolean, run: RunCommand = runCommand): Promise<Reading> {
  const text = readText(paths.resolvConf);
  if (text === undefined) return { ok: false, why: `${paths.resolvConf} could not be read` };
  const conf = parseResolvConf(text);
  if (conf.nameservers.length === 0) return { ok: false, why: `${paths.resolvConf} names no nameserver (glibc then asks 127.0.0.1:53; dotstub can't tell what answers there)` };
  const file = resolvConfPaths(paths.resolvConf, conf.nameservers, ours, text.includes(MANAGED_MARKER));
  if (!file.viaResolved) {
    // glibc doesn't ask resolved here, but programs that use resolved's own API (nss-resolve, resolvectl, D-Bus) do
    // when it runs: its paths count for them (no search-list glue: that is glibc's, and glibc asks dotstub).
    // Not running (its settings can't be read): nothing goes through it.
    const direct = await resolvedPaths(run, ours, []);
    return { ok: true, paths: direct.ok ? [...file.paths, ...direct.paths] : file.paths };
  }
  const searchList = conf.otherLines.flatMap((line) => (/^(search|domain)\s/.test(line) ? line.split(/\s+/).slice(1) : [])).map((d) => d.toLowerCase().replace(/\.$/, '')).filter((d) => d !== '' && d !== '.');
  const resolved = await resolvedPaths(run, ours, searchList);
  return resolved.ok ? { ok: true, paths: [...file.paths, ...resolved.paths] } : resolved;
}

export interface LeakWatchOptions {
  readonly paths: Pick<DiscoveryPaths, 'resolvConf'> & Partial<Pick<DiscoveryPaths, 'resolvedUplink'>>;
  /** Whether a server is dotstub (one of its listen addresses). */
  readonly ours: (s: NetworkServer) => boolean;
  /** Network changes are watched (network/watch.ts): without that a path opened later would go unseen, so nothing is claimed. */
  readonly watchingNetwork: boolean;
  readonly run?: RunCommand;
  readonly now?: () => number;
  /** How directories are watched (fs.watch; a test gives one that fails as inotify does when out of watches). */
  readonly watchDir?: (dir: string, listener: (event: string, name: string | null) => void) => fs.FSWatcher;
}

/**
 * The leak watch of a run that routes names (it reads where names are read);
 * null when routing is off. It reads the OS again each time the network we're
 * on moves (its owner's 'changed').
 */
export function leakWatchFor(
  names: { readonly paths: LeakWatchOptions['paths']; readonly run?: RunCommand } | null,
  o: Pick<LeakWatchOptions, 'ours' | 'watchingNetwork'> & { readonly network: Pick<CurrentNetwork, 'on'> },
): LeakWatch | null {
  if (!names) return null;
  const watch = new LeakWatch({ ours: o.ours, watchingNetwork: o.watchingNetwork, paths: names.paths, ...(names.run ? { run: names.run } : {}) });
  o.network.on('changed', (c) => {
    if (c.why === 'moved') void watch.networkChanged();
  });
  return watch;
}

/**
 * Reads the OS's state when something may have changed it, and tells its
 * observers after every reading (docs/architecture.md#rules-every-part-keeps:
 * a reading that changes is pushed, never left to a refresh): the stream carries the new view at
 * once, so the banner never shows the reading from before a takeover.
 *
 * Invariants: a view says `measured` only while the last reading succeeded
 * AND resolv.conf's directory is watched (a watch that failed, or died,
 * turns it into "not measured" with why); observers hear of every reading
 * and of every change of what is watched, in order.
 */
export class LeakWatch {
  readonly #options: LeakWatchOptions;
  readonly #now: () => number;
  #reading: Reading | null = null;
  #checkedAt: number | null = null;
  #cleanSince: number | null = null;
  #changes = 0;
  readonly #reads = new CoalescedRead(async () => {
    // A reading that fails however it fails (a throw, a rejection, an exception from its I/O: runtime/side-check.ts)
    // is said as such: it never stops the proxy, nor counts as clean.
    const measured = await sideCheck("the leak watch's reading of the system's DNS settings", () => readBypassPaths(this.#options.paths, this.#options.ours, this.#options.run));
    const reading: Reading = measured.ok ? measured.value : { ok: false, why: `reading the system's DNS settings failed (${measured.why})` };
    this.#apply(reading);
  });
  readonly #watchers: fs.FSWatcher[] = [];
  /** Why resolv.conf's changes aren't watched (the watch failed or died); null while they are, or before start. */
  #unwatched: string | null = null;
  readonly #observers = new Set<(view: LeakView) => void>();

  constructor(options: LeakWatchOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Calls `observer` with the view after every reading and every change of what is watched; returns the unsubscribe. */
  onChange(observer: (view: LeakView) => void): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  #tell(): void {
    const view = this.view();
    for (const o of this.#observers) o(view);
  }

  /**
   * Reads the OS's state, then re-reads whenever resolv.conf is written and
   * whenever systemd-resolved rewrites its files (it does on every change of
   * a link's servers or domains, and when it loads a drop-in): inotify, no timer.
   */
  async start(): Promise<void> {
    const { resolvConf, resolvedUplink } = this.#options.paths;
    this.#watch(path.dirname(resolvConf), true, path.basename(resolvConf));
    if (resolvedUplink !== undefined) this.#watch(path.dirname(resolvedUplink), false);
    await this.refresh();
  }

  /** `required`: without this watch a path added later would go unseen (resolv.conf's); resolved's directory may simply not exist. */
  #watch(dir: string, required: boolean, only?: string): void {
    const lost = (err: unknown): void => {
      if (!required) return;
      const code = (err as NodeJS.ErrnoException | null)?.code;
      this.#unwatched = `changes to ${dir} can't be watched (${code ?? (err instanceof Error ? err.message : String(err))}${code === 'ENOSPC' ? ': the system is out of inotify watches' : ''}), so a path added later would go unseen`;
      this.#tell();
    };
    try {
      const w = (this.#options.watchDir ?? fs.watch)(dir, (_e, name) => {
        if (only !== undefined && name !== only) return;
        this.#reads.soon();
      });
      w.on('error', (err) => {
        w.close();
        lost(err);
      });
      this.#watchers.push(w);
    } catch (err) {
      lost(err);
    }
  }

  stop(): void {
    this.#reads.cancel();
    for (const w of this.#watchers.splice(0)) w.close();
  }

  /**
   * The network changed: counted, and the OS's state read again. A watch
   * that had failed is tried again; what happened while it was down went
   * unseen, so "clean since" starts again from this reading.
   */
  networkChanged(): Promise<void> {
    this.#changes++;
    if (this.#unwatched !== null) {
      this.#unwatched = null;
      this.#cleanSince = null;
      const { resolvConf } = this.#options.paths;
      this.#watch(path.dirname(resolvConf), true, path.basename(resolvConf));
    }
    return this.refresh();
  }

  /**
   * Reads again now; asks during a read coalesce into one more read after it,
   * and the promise settles once a reading that began after the ask is applied.
   */
  refresh(): Promise<void> {
    return this.#reads.run();
  }

  #apply(reading: Reading): void {
    const at = this.#now();
    this.#reading = reading;
    this.#checkedAt = at;
    if (reading.ok && reading.paths.length === 0) {
      if (this.#cleanSince === null) {
        this.#cleanSince = at;
        this.#changes = 0;
      }
    } else {
      this.#cleanSince = null;
      this.#changes = 0;
    }
    this.#tell();
  }

  view(): LeakView {
    const r = this.#reading;
    if (!this.#options.watchingNetwork) return notMeasured("network changes aren't watched in this run, so a path opened later would go unseen");
    if (r === null) return notMeasured('the system’s DNS settings have not been read yet');
    if (!r.ok) return { ...notMeasured(r.why), checkedAt: this.#checkedAt };
    if (this.#unwatched !== null) return { ...notMeasured(this.#unwatched), checkedAt: this.#checkedAt };
    return { measured: true, why: null, paths: r.paths, cleanSince: this.#cleanSince, networkChanges: this.#cleanSince === null ? 0 : this.#changes, checkedAt: this.#checkedAt };
  }
}

export function notMeasured(why: string): LeakView {
  return { measured: false, why, paths: [], cleanSince: null, networkChanges: 0, checkedAt: null };
}
