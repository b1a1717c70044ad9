import { describe, expect, it } from 'vitest';
import type { LocalNamesView, StatusView } from '../../proxy/control/api-types.js';
import { localNamesNotice, localNamesQuestion } from './local-names-question.js';
import { createTemplate } from './template.js';
import { INITIAL_TRAY_STATE, type MenuItemSpec, type TrayState } from './types.js';

const view = (over: Partial<LocalNamesView> = {}): LocalNamesView => ({
  knownNetwork: true,
  policy: 'ask',
  remembered: false,
  owners: [{ suffix: 'lan', link: 'the network', servers: ['10.99.0.1'], source: 'resolv.conf' }],
  lan: null,
  firstRefused: { name: 'printer.lan', suffix: 'lan', at: 1000 },
  ...over,
});
const status = (mode: StatusView['mode']): StatusView => ({ mode }) as StatusView;

describe('localNamesQuestion: the tray asks only when a name waits for a choice', () => {
  it('strict, a refused name, nobody chose for this network: asks, naming it', () => {
    expect(localNamesQuestion(status('strict'), view())).toEqual({ name: 'printer.lan', at: 1000 });
  });
  it('never in opportunistic mode, for a network already answered, one that cannot be told apart, or before a refusal', () => {
    expect(localNamesQuestion(status('opportunistic'), view())).toBeUndefined();
    expect(localNamesQuestion(status('strict'), view({ policy: 'deny', remembered: true }))).toBeUndefined();
    expect(localNamesQuestion(status('strict'), view({ policy: 'allow', remembered: true }))).toBeUndefined();
    expect(localNamesQuestion(status('strict'), view({ knownNetwork: false }))).toBeUndefined();
    expect(localNamesQuestion(status('strict'), view({ firstRefused: null }))).toBeUndefined();
    expect(localNamesQuestion(status('strict'), null)).toBeUndefined();
    expect(localNamesQuestion(undefined, view())).toBeUndefined();
  });
});

const running: TrayState = { ...INITIAL_TRAY_STATE, proxyRunning: true, privacy: 'private', reason: '' };
const asking = (name = 'printer.lan', at = 1000): TrayState => ({ ...running, localNames: { name, at } });
const ids = (items: readonly MenuItemSpec[]): string[] => items.flatMap((i) => ('id' in i ? [i.id] : []));

describe('the question in the tray', () => {
  it('says what the network has and asks, with the two answers', () => {
    const items = createTemplate(asking());
    expect(items.filter((i) => 'id' in i && i.id.startsWith('local-names'))).toEqual([
      { type: 'label', id: 'local-names', label: 'This network has its own names (printer.lan)' },
      { type: 'label', id: 'local-names-question', label: 'Send them to its resolver, unencrypted?' },
      { type: 'normal', id: 'local-names-allow', label: 'Allow on this network', enabled: true, action: { type: 'local-names', allow: true } },
      { type: 'normal', id: 'local-names-keep', label: 'Keep private', enabled: true, action: { type: 'local-names', allow: false } },
    ]);
    // Before the resolvers: the thing to answer first.
    expect(ids(items).indexOf('local-names')).toBeLessThan(ids(items).indexOf('resolvers') === -1 ? Infinity : ids(items).indexOf('resolvers'));
    expect(ids(items).indexOf('local-names')).toBeLessThan(ids(items).indexOf('open-dashboard'));
  });
  it('a long name is clipped; nothing asks without a question or while the proxy is not running', () => {
    expect(createTemplate(asking(`${'a'.repeat(80)}.lan`)).find((i) => 'id' in i && i.id === 'local-names')).toMatchObject({ label: expect.stringMatching(/…$/) as unknown });
    expect(ids(createTemplate(running)).filter((i) => i.startsWith('local-names'))).toEqual([]);
    expect(ids(createTemplate({ ...asking(), proxyRunning: false })).filter((i) => i.startsWith('local-names'))).toEqual([]);
  });
});

describe('localNamesNotice: once per question', () => {
  it('when the question appears, naming the name and where to answer', () => {
    const n = localNamesNotice(running, asking());
    expect(n?.title).toBe('This network has its own names (printer.lan)');
    expect(n?.body).toBe("printer.lan didn't resolve: strict mode keeps this network's own names private until you choose. Send them to its resolver, unencrypted? Choose “Allow on this network” or “Keep private” in the tray.");
  });
  it('not again while the same question stays, nor when it goes; again for a new refusal after the choice was forgotten', () => {
    expect(localNamesNotice(asking(), asking())).toBeNull();
    expect(localNamesNotice(asking(), { ...asking(), p50Ms: 3 })).toBeNull();
    expect(localNamesNotice(asking(), running)).toBeNull();
    expect(localNamesNotice(running, asking('nas.lan', 2000))).not.toBeNull();
  });
});
