/**
 * Page object for the dashboard: role-based locators a person would use,
 * and methods named after what they do.
 */
import { expect, type Download, type Locator, type Page } from '@playwright/test';

export type Section = 'Overview' | 'Queries' | 'Resolvers' | 'Connections' | 'Network' | 'Events' | 'System DNS' | 'Settings';

export class Dashboard {
  readonly page: Page;
  readonly banner: Locator;
  readonly nav: Locator;
  readonly liveIndicator: Locator;
  readonly queryLog: Locator;
  readonly logRows: Locator;
  readonly logCount: Locator;
  readonly nameFilter: Locator;
  readonly typeFilter: Locator;
  readonly rcodeFilter: Locator;
  readonly slowOnly: Locator;
  readonly pauseButton: Locator;
  readonly queryDetail: Locator;
  readonly resolverList: Locator;
  readonly connectionsTable: Locator;
  readonly events: Locator;
  /** The header's one switch for the machine's private DNS (shown when this dotstub manages system DNS). */
  readonly headerSwitch: Locator;

  constructor(page: Page) {
    this.page = page;
    this.banner = page.getByRole('region', { name: 'Privacy status' });
    this.nav = page.getByRole('navigation', { name: 'Sections' });
    this.liveIndicator = page.getByRole('banner').getByRole('status');
    this.queryLog = page.getByRole('grid', { name: /Query log/ });
    this.logRows = this.queryLog.getByRole('rowgroup').nth(1).getByRole('row');
    this.logCount = page.getByTestId('log-count');
    this.nameFilter = page.getByRole('searchbox', { name: 'Filter by name' });
    this.typeFilter = page.getByRole('combobox', { name: 'Filter by type' });
    this.rcodeFilter = page.getByRole('combobox', { name: 'Filter by response code' });
    this.slowOnly = page.getByRole('checkbox', { name: 'Slow only' });
    this.pauseButton = page.getByRole('button', { name: /^(Pause|Resume)$/ });
    this.queryDetail = page.getByRole('complementary');
    this.resolverList = page.getByRole('list', { name: 'Resolvers', exact: true });
    this.connectionsTable = page.getByRole('table', { name: 'Open connections' });
    this.events = page.getByRole('list', { name: 'Events, newest first' });
    this.headerSwitch = page.getByRole('banner').getByRole('switch', { name: /^Private DNS/ });
  }

  /** Opens the link dotstub printed, which signs this tab in. */
  async open(url: string): Promise<void> {
    await this.page.goto(url);
    await expect(this.liveIndicator).toHaveText('Live');
  }

  async goTo(section: Section): Promise<void> {
    await this.nav.getByRole('link', { name: section }).click();
    await expect(this.page.getByRole('heading', { level: 1 })).toHaveText(section === 'Queries' ? 'Query log' : section);
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

  async setRecordNames(on: boolean): Promise<void> {
    await this.page.getByRole('switch', { name: 'Record names in the query log' }).setChecked(on);
  }

  async fillSetting(label: string, value: string): Promise<void> {
    await this.page.getByRole('textbox', { name: label }).fill(value);
  }

  async saveSettings(): Promise<void> {
    await this.page.getByRole('button', { name: 'Save settings' }).click();
  }

  async exportCsv(): Promise<Download> {
    const download = this.page.waitForEvent('download');
    await this.page.getByRole('button', { name: 'CSV' }).click();
    return download;
  }
}
