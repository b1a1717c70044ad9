/**
 * Page object for the dashboard: role-based locators a person would use,
 * and methods named after what they do.
 */
import { expect, type Download, type Locator, type Page } from '@playwright/test';

export type Section = 'Overview' | 'Queries' | 'Resolvers' | 'Connections' | 'Network' | 'Events' | 'System DNS' | 'Settings';

/** The query log's columns a test reads, by their place in a row. */
const LOG_COLUMN = { type: 2, response: 3, time: 4, resolver: 6 } as const;

export class Dashboard {
  readonly page: Page;
  readonly banner: Locator;
  readonly nav: Locator;
  /** The open section's title (h1): "Query log" for Queries. */
  readonly sectionHeading: Locator;
  /** The open section's content; dimmed (class `stale`) while dotstub can't be reached. */
  readonly content: Locator;
  /** What a section shows in place of figures while the page is not signed in. */
  readonly sectionPlaceholder: Locator;
  readonly liveIndicator: Locator;
  readonly queryLog: Locator;
  readonly logRows: Locator;
  readonly logCount: Locator;
  readonly nameFilter: Locator;
  readonly typeFilter: Locator;
  readonly rcodeFilter: Locator;
  readonly slowOnly: Locator;
  readonly slowThreshold: Locator;
  readonly pauseButton: Locator;
  readonly queryDetail: Locator;
  readonly resolverList: Locator;
  /** The resolver card marked as the one in use. */
  readonly currentResolver: Locator;
  /** Under the resolvers' latency bars: "a full bar is 40 ms." */
  readonly latencyScale: Locator;
  readonly connectionsTable: Locator;
  readonly events: Locator;
  /** After a save with errors: each setting to fix, a link to its field. */
  readonly settingsErrors: Locator;
  /** Beside Save: "1 unsaved change". */
  readonly unsavedChanges: Locator;
  /** Asked when leaving Settings with unsaved edits: "You have 1 unsaved change. Leave Settings without saving?" */
  readonly leaveGuard: Locator;
  /** A message the page raises (role alert): "Nothing was saved. Fix these first:". */
  readonly alert: Locator;
  /** The header's one switch for the machine's private DNS (shown when this dotstub manages system DNS). */
  readonly headerSwitch: Locator;

  constructor(page: Page) {
    this.page = page;
    this.banner = page.getByRole('region', { name: 'Privacy status' });
    this.nav = page.getByRole('navigation', { name: 'Sections' });
    this.sectionHeading = page.getByRole('heading', { level: 1 });
    this.content = page.getByRole('main');
    this.sectionPlaceholder = page.getByTestId('section-placeholder');
    this.liveIndicator = page.getByRole('banner').getByRole('status');
    this.queryLog = page.getByRole('grid', { name: /Query log/ });
    this.logRows = this.queryLog.getByRole('rowgroup').nth(1).getByRole('row');
    this.logCount = page.getByTestId('log-count');
    this.nameFilter = page.getByRole('searchbox', { name: 'Filter by name' });
    this.typeFilter = page.getByRole('combobox', { name: 'Filter by type' });
    this.rcodeFilter = page.getByRole('combobox', { name: 'Filter by response code' });
    this.slowOnly = page.getByRole('checkbox', { name: 'Slow only' });
    this.slowThreshold = page.getByRole('spinbutton', { name: 'Slow threshold in milliseconds' });
    this.pauseButton = page.getByRole('button', { name: /^(Pause|Resume)$/ });
    this.queryDetail = page.getByRole('complementary');
    this.resolverList = page.getByRole('list', { name: 'Resolvers', exact: true });
    this.currentResolver = this.resolverList.locator('li[aria-current="true"]');
    this.latencyScale = page.getByTestId('latency-scale');
    this.connectionsTable = page.getByRole('table', { name: 'Open connections' });
    this.events = page.getByRole('list', { name: 'Events, newest first' });
    this.settingsErrors = page.getByRole('list', { name: 'Settings to fix' });
    this.unsavedChanges = page.getByTestId('unsaved');
    this.leaveGuard = page.getByRole('alertdialog');
    this.alert = page.getByRole('alert');
    this.headerSwitch = page.getByRole('banner').getByRole('switch', { name: /^Private DNS/ });
  }

  /** Opens the link dotstub printed, which signs this tab in. */
  async open(url: string): Promise<void> {
    await this.page.goto(url);
    await expect(this.liveIndicator).toHaveText('Live');
  }

  async goTo(section: Section): Promise<void> {
    await this.clickSection(section);
    await expect(this.sectionHeading).toHaveText(section === 'Queries' ? 'Query log' : section);
  }

  /** Clicks a section's link without waiting for it to open (unsaved settings ask first). */
  async clickSection(section: Section): Promise<void> {
    await this.nav.getByRole('link', { name: section }).click();
  }

  /** Words on the page as a person reads them: a hint, a field's error, a label. */
  text(words: string | RegExp, options?: { readonly exact?: boolean }): Locator {
    return this.page.getByText(words, options);
  }

  /** A status line (role status) saying `words`: "Saved.", "Added Lab resolver B.", "Now using …". */
  statusMessage(words: string | RegExp): Locator {
    return this.page.getByRole('status').filter({ hasText: words });
  }

  /** The value (and sub-line) of an overview tile, by its label. */
  tile(label: string): Locator {
    return this.page.getByRole('group', { name: label });
  }

  /** A connection-hit gauge, by its label ("Connection hits since start", "Connection hits, last 5 min"). */
  gauge(label: string): Locator {
    return this.page.getByRole('meter', { name: label, exact: true });
  }

  /** Turns private DNS on from the banner's "Turn on private DNS" (Off, first start). */
  async turnOnFromBanner(): Promise<void> {
    await this.banner.getByRole('button', { name: 'Turn on private DNS' }).click();
    await expect(this.banner).toHaveAttribute('data-state', 'private');
  }

  /** The header switch, off for a while (`5 min`, `1 hour`) or `Until I resume`. */
  async turnOffFromHeader(choice: '5 min' | '1 hour' | 'Until I resume'): Promise<void> {
    await this.headerSwitch.click();
    await this.page.getByRole('group', { name: 'Turn private DNS off for' }).getByRole('button', { name: choice }).click();
    await expect(this.banner).toHaveAttribute('data-state', choice === 'Until I resume' ? 'off' : 'paused');
  }

  /** The log row for a name (newest first). */
  row(name: string | RegExp): Locator {
    return this.logRows.filter({ hasText: name });
  }

  /** One cell of a log row: its type, response, time or resolver. */
  logCell(row: Locator, column: keyof typeof LOG_COLUMN): Locator {
    return row.getByRole('gridcell').nth(LOG_COLUMN[column]);
  }

  /** "Paused · 2 new" above the log while it is paused. */
  pausedNote(newCount: number): Locator {
    return this.page.getByText(new RegExp(`Paused · ${newCount} new`));
  }

  /** A row of the open query's timing breakdown ("Queue wait", "Upstream"). */
  timingRow(step: string | RegExp): Locator {
    return this.queryDetail.getByRole('table', { name: 'Timing breakdown' }).getByRole('row', { name: step });
  }

  async filterByName(text: string): Promise<void> {
    await this.nameFilter.fill(text);
  }

  async filterByType(type: string): Promise<void> {
    await this.typeFilter.selectOption(type === '' ? { label: 'Any' } : type);
  }

  async clearFilters(): Promise<void> {
    await this.page.getByRole('button', { name: 'Clear filters' }).click();
  }

  async openQuery(name: string): Promise<void> {
    await this.row(name).first().click();
    await expect(this.queryDetail).toBeVisible();
  }

  /** System DNS: the machine-wide toggle (a switch), and the leak test. */
  systemDnsToggle(): Locator {
    return this.page.getByRole('switch', { name: /(Enable|Disable) private DNS/ });
  }

  async enablePrivateDns(): Promise<void> {
    await this.page.getByRole('switch', { name: 'Enable private DNS' }).click();
    await expect(this.page.getByRole('switch', { name: 'Disable private DNS' })).toBeEnabled();
  }

  async disablePrivateDns(): Promise<void> {
    await this.page.getByRole('switch', { name: 'Disable private DNS' }).click();
    await expect(this.page.getByRole('switch', { name: 'Enable private DNS' })).toBeEnabled();
  }

  async runLeakTest(): Promise<Locator> {
    await this.page.getByRole('button', { name: 'Run leak test' }).click();
    const result = this.page.getByTestId('leak-result');
    await expect(result).toBeVisible();
    return result;
  }

  /** A resolver's card in the list, by its label. */
  resolverCard(label: string): Locator {
    return this.resolverList.getByRole('listitem').filter({ hasText: label });
  }

  /** A row of the open connections, by what it shows (its resolver, "burst"). */
  connectionRow(text: string | RegExp): Locator {
    return this.connectionsTable.getByRole('row').filter({ hasText: text });
  }

  async switchResolver(label: string): Promise<void> {
    await this.resolverList.getByRole('button', { name: `Use ${label}`, exact: true }).click();
  }

  async addResolver(r: { label: string; address: string; port: number; authName: string }): Promise<void> {
    const form = this.page.getByRole('form', { name: 'Add a custom resolver' });
    await form.getByRole('textbox', { name: 'Name', exact: true }).fill(r.label);
    await form.getByRole('textbox', { name: 'Address', exact: true }).fill(r.address);
    await form.getByRole('textbox', { name: 'Port', exact: true }).fill(String(r.port));
    await form.getByRole('textbox', { name: 'Authentication name' }).fill(r.authName);
    await form.getByRole('button', { name: 'Add resolver' }).click();
  }

  /** A setting's text field, by the label the form shows. */
  settingField(label: string): Locator {
    return this.page.getByRole('textbox', { name: label });
  }

  /** A setting's on/off switch, by the label the form shows. */
  settingSwitch(label: string): Locator {
    return this.page.getByRole('switch', { name: label });
  }

  async setRecordNames(on: boolean): Promise<void> {
    await this.settingSwitch('Record names in the query log').setChecked(on);
  }

  async fillSetting(label: string, value: string): Promise<void> {
    await this.settingField(label).fill(value);
  }

  async saveSettings(): Promise<void> {
    await this.page.getByRole('button', { name: 'Save settings' }).click();
  }

  /** In the leave-Settings question: "Stay and keep editing" or "Discard changes and leave". */
  leaveGuardButton(name: 'Stay and keep editing' | 'Discard changes and leave'): Locator {
    return this.leaveGuard.getByRole('button', { name });
  }

  async exportCsv(): Promise<Download> {
    const download = this.page.waitForEvent('download');
    await this.page.getByRole('button', { name: 'CSV' }).click();
    return download;
  }
}
