import { useEffect, useRef, useSyncExternalStore, type ReactNode } from 'react';
import { ConnectionsTable, ConnectionStats, HitGauges } from './components/Connections.js';
import { Icon, type IconName } from './components/Icon.js';
import { NetworkView } from './components/Network.js';
import { Overview } from './components/Overview.js';
import { PrivacyBanner } from './components/PrivacyBanner.js';
import { PrivacySwitch } from './components/PrivacySwitch.js';
import { CaptiveCard } from './components/CaptiveCard.js';
import { QueryLog } from './components/QueryLog.js';
import { AddResolverForm } from './components/AddResolverForm.js';
import { ResolverSwitcher } from './components/Resolvers.js';
import { ResolverTest } from './components/ResolverTest.js';
import { RetiredNotice } from './components/RetiredNotice.js';
import { SettingsForm } from './components/SettingsForm.js';
import { SettingsTransfer } from './components/SettingsTransfer.js';
import { SystemDnsPanel } from './components/SystemDns.js';
import { Timeline } from './components/Timeline.js';
import { placeholder } from './lib/link-status.js';
import { formatClockShort } from './lib/format.js';
import { parseRoute } from './lib/routes.js';
import { useDashboard, useReach, useStore } from './state/context.js';
import { useSystemDns, useSystemDnsSync } from './state/system-dns.js';
import { bannerState } from './lib/banner.js';
import { tabIcon, tabTitle, type TabState } from './lib/tab-state.js';

function useRoute(): Route {
  return useSyncExternalStore(
    (cb) => {
      window.addEventListener('hashchange', cb);
      return () => window.removeEventListener('hashchange', cb);
    },
    () => parseRoute(window.location.hash, ROUTES, 'overview'),
  );
}

function LinkIndicator() {
  const link = useDashboard((s) => s.link);
  const linkError = useDashboard((s) => s.linkError);
  const r = useReach();
  const text =
    r === 'signed-out'
      ? 'Not signed in'
      : r === 'lost'
        ? 'Not connected'
        : link === 'live'
          ? 'Live'
          : link === 'connecting'
            ? 'Connecting…'
            : 'Reconnecting…';
  return (
    <span className={`link-state link-${r === 'lost' ? 'lost' : link}`} role="status" title={linkError ?? undefined}>
      <span className="dot" aria-hidden="true" />
      {text}
    </span>
  );
}

/** Not connected: the figures below are the last known ones, and say since when (readable text, not greyed out). */
function StaleStamp() {
  const r = useReach();
  const lostAt = useDashboard((s) => s.lostAt);
  const hadStatus = useDashboard((s) => s.status !== null);
  if (r !== 'lost' || !hadStatus || lostAt === null) return null;
  return (
    <p className="stale-stamp" data-testid="stale-stamp">
      <Icon name="clock" />
      <strong>Last known {formatClockShort(lostAt).slice(0, 5)}</strong> — figures below are from before the connection was lost.
    </p>
  );
}

function Page({ title, intro, children, compact }: { title: string; intro?: ReactNode; children: ReactNode; compact?: boolean }) {
  return (
    <>
      <header className={`page-head${compact ? ' compact-narrow' : ''}`}>
        <h1 tabIndex={-1}>{title}</h1>
        {intro && <p className="muted">{intro}</p>}
      </header>
      {children}
    </>
  );
}

/** "Move your settings": the settings transfer, which re-reads the settings after an import. */
function SettingsMove() {
  const store = useStore();
  return (
    <section className="card" aria-labelledby="settings-move">
      <h2 id="settings-move">Move your settings</h2>
      <SettingsTransfer
        lead="One file with these settings and your choice of local names for each network dotstub remembers: keep it, or import it on another computer."
        onImported={() => void store.refresh('settings')}
      />
    </section>
  );
}

interface Section {
  /** In the navigation. */
  readonly label: string;
  readonly icon: IconName;
  /** The page's heading and the tab's title. */
  readonly title: string;
  readonly intro?: string;
  /** The heading shrinks on narrow windows (the query log wants the height). */
  readonly compact?: boolean;
  readonly body: ReactNode;
}

/**
 * The dashboard's sections, one entry each, in the navigation's order: the
 * URL hash names one (#/queries), so links and reloads land on it; an
 * unknown hash is the overview.
 */
const SECTIONS = {
  overview: { label: 'Overview', icon: 'overview', title: 'Overview', body: <Overview /> },
  queries: {
    label: 'Queries',
    icon: 'list',
    title: 'Query log',
    compact: true,
    intro: 'Every lookup from this machine, newest first. Select a row to see where its time went.',
    body: <QueryLog />,
  },
  resolvers: {
    label: 'Resolvers',
    icon: 'server',
    title: 'Resolvers',
    intro: 'Who answers your DNS. Switching never drops a query: queries in flight finish on the old connection.',
    body: (
      <>
        {/* The test and "Use fastest" first: with the presets listed, the cards run ~1,300 px (issue 29). */}
        <ResolverTest />
        <section className="card">
          <ResolverSwitcher />
        </section>
        <section className="card">
          <AddResolverForm />
        </section>
      </>
    ),
  },
  connections: {
    label: 'Connections',
    icon: 'link',
    title: 'Connections',
    intro: 'Open DNS-over-TLS connections. Reusing one costs a single round trip; a new one costs a handshake.',
    body: (
      <>
        <div className="connections-top">
          <section className="card" aria-label="Connection hit fraction">
            <HitGauges />
          </section>
          <section className="card" aria-label="Connection counters">
            <ConnectionStats />
          </section>
        </div>
        <section className="card">
          <ConnectionsTable />
        </section>
      </>
    ),
  },
  network: {
    label: 'Network',
    icon: 'wifi-sign-in',
    title: 'Network',
    intro: 'What this network does to encrypted DNS: which transport carries your queries, and what each try met.',
    body: <NetworkView />,
  },
  events: {
    label: 'Events',
    icon: 'clock',
    title: 'Events',
    intro: 'Connections opening, resuming and closing, resets, and every privacy change with its reason.',
    body: (
      <section className="card">
        <Timeline />
      </section>
    ),
  },
  'system-dns': {
    label: 'System DNS',
    icon: 'shield-check',
    title: 'System DNS',
    intro: 'Whether every program on this machine asks dotstub. Disabling, quitting or a crash gives your old DNS settings back exactly.',
    body: <SystemDnsPanel />,
  },
  settings: {
    label: 'Settings',
    icon: 'sliders',
    title: 'Settings',
    intro: 'Saved to your config folder; they survive a restart.',
    body: (
      <>
        <SettingsForm />
        <SettingsMove />
      </>
    ),
  },
} as const satisfies Readonly<Record<string, Section>>;

type Route = keyof typeof SECTIONS;
const ROUTES = Object.keys(SECTIONS) as Route[];

function View({ route }: { route: Route }) {
  const r = useReach();
  const hadStatus = useDashboard((s) => s.status !== null);
  const empty = placeholder(r, hadStatus);
  const section: Section = SECTIONS[route];
  return (
    <Page title={section.title} intro={empty === null ? section.intro : undefined} compact={empty === null && section.compact}>
      {empty === null ? (
        section.body
      ) : (
        <p className="card empty" data-testid="section-placeholder">
          {empty}
        </p>
      )}
    </Page>
  );
}

export function App() {
  const route = useRoute();
  const r = useReach();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  useSystemDnsSync();

  // Move focus to the new page's heading so keyboard and screen-reader users land in it.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    window.scrollTo(0, 0);
    main.current?.querySelector('h1')?.focus({ preventScroll: true });
  }, [route]);

  // The tab says the privacy state, in its title and its icon: a background tab must not look protected.
  const privacy = useDashboard((s) => s.status?.state);
  const pausedUntil = useSystemDns()?.pausedUntil ?? null;
  const tab: TabState = r === 'lost' || r === 'signed-out' || privacy === undefined ? 'unknown' : bannerState(privacy, pausedUntil);
  useEffect(() => {
    document.title = tabTitle(tab, SECTIONS[route].title);
    const link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
    if (link) link.href = tabIcon(tab);
  }, [route, tab]);

  return (
    <div className="app">
      <a className="skip-link" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header className="topbar">
        <div className="brand">
          <img src="./icon.svg" alt="" width="22" height="22" />
          <span>dotstub</span>
        </div>
        <nav aria-label="Sections">
          <ul>
            {ROUTES.map((name) => (
              <li key={name}>
                <a href={`#/${name === 'overview' ? '' : name}`} aria-current={route === name ? 'page' : undefined}>
                  <Icon name={SECTIONS[name].icon} />
                  <span>{SECTIONS[name].label}</span>
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <PrivacySwitch />
        <LinkIndicator />
      </header>
      <main id="main" ref={main} tabIndex={-1} className={`main route-${route}${r === 'lost' || r === 'signed-out' ? ' stale' : ''}`}>
        <PrivacyBanner />
        <StaleStamp />
        <RetiredNotice />
        <CaptiveCard />
        <View route={route} />
      </main>
    </div>
  );
}
