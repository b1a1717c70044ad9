/** The query log's words for names the router sent elsewhere than the chosen resolver: rows, detail, filter, export. */
import { describe, expect, test } from 'vitest';
import { EXPORT_COLUMNS } from '../../../proxy/control/api-client/query-export.js';
import { toCsv } from './export.js';
import { compileFilter, EMPTY_FILTER, filterToParams, isFilterActive, routeFromHash } from './filters.js';
import { record } from './fixtures.test-helpers.js';
import { connectionText, detailFacts, resolverCellText, routeWords } from './query-row.js';

const local = record({ name: 'printer.lan', source: 'cleartext', resolverId: null, connectionId: null, reused: null, route: { kind: 'link', link: 'veth0', suffix: 'lan', servers: '10.99.0.1', source: '/etc/resolv.conf before the takeover' } });
const here = record({ seq: 2, name: 'tv.local', rcode: 'NXDOMAIN', source: 'local', resolverId: null, connectionId: null, route: { kind: 'answered', why: '.local names belong to mDNS: answered here, never sent' } });
const pub = record({ seq: 3 });

describe('local-name rows', () => {
  test('a name sent to the network’s own resolver says so, with the link and server', () => {
    expect(routeWords(local.route)).toMatchObject({ badge: 'local', sentence: 'local · your network’s resolver, unencrypted', where: 'veth0 · 10.99.0.1' });
    expect(connectionText(local)).toBe('unencrypted');
    expect(resolverCellText(local, '—')).toBe('your network’s resolver');
    const facts = Object.fromEntries(detailFacts(local, '—'));
    expect(facts['Answer from']).toBe('your network’s own resolver, unencrypted (veth0, 10.99.0.1)');
    expect(facts.Why).toContain('a name under lan, which veth0 owns (learned from /etc/resolv.conf before the takeover)');
    expect(facts.Resolver).toBe('veth0’s resolver 10.99.0.1 (plain DNS)');
  });

  test('a name answered here says why; a public name is as before', () => {
    expect(routeWords(here.route)?.sentence).toBe('answered here, never sent: .local names belong to mDNS: answered here, never sent');
    expect(connectionText(here)).toBe('not sent');
    expect(Object.fromEntries(detailFacts(here, '—')).Why).toContain('.local names belong to mDNS');
    const refused = routeWords({ kind: 'refused', why: 'lan is a local name (veth0): strict mode sends local names to the network’s resolver only once you allow it for this network' });
    expect(refused?.sentence).toBe('refused here, never sent: lan is a local name (veth0): strict mode sends local names to the network’s resolver only once you allow it for this network');
    // The row's mark and its screen-reader rest make the sentence.
    for (const w of [routeWords(local.route), routeWords(here.route), refused]) expect(`${w?.badge ?? ''}${w?.rest ?? ''}`).toBe(w?.sentence);
    expect(routeWords(pub.route)).toBeNull();
    expect(resolverCellText(pub, 'Quad9')).toBe('Quad9');
  });

  test('the Sent to filter, the banner’s link, the API form and the export', () => {
    const f = { ...EMPTY_FILTER, route: routeFromHash('#/queries?route=link') };
    expect(f.route).toBe('link');
    expect(routeFromHash('#/queries?route=nonsense')).toBe('');
    expect(isFilterActive(f)).toBe(true);
    expect([local, here, pub].filter(compileFilter(f)).map((r) => r.name)).toEqual(['printer.lan']);
    expect([local, here, pub].filter(compileFilter({ ...EMPTY_FILTER, route: 'local' })).map((r) => r.name)).toEqual(['printer.lan', 'tv.local']);
    expect(filterToParams(f).toString()).toBe('route=link');
    const lines = toCsv([local, pub], undefined).trim().split('\r\n');
    expect(EXPORT_COLUMNS.slice(-7)).toEqual(['route', 'routeLink', 'routeServers', 'routeSuffix', 'routeSource', 'routeWhy', 'internal']);
    expect(lines[1]?.endsWith(',link,veth0,10.99.0.1,lan,/etc/resolv.conf before the takeover,,false')).toBe(true);
    expect((lines[2] ?? '').endsWith(',,,,,,,false')).toBe(true);
  });
});
