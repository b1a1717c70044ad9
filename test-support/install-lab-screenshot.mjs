// The dashboard as the installed service serves it, photographed from
// inside the install lab's machine: run in that machine's network namespace
// (nsenter -n; the container's own loopback, nothing else), it opens the
// link `dotstub ctl dashboard` printed there, goes to System DNS and saves a
// full-page screenshot after running its leak test (light, then dark).
//   node test-support/install-lab-screenshot.mjs URL OUT-PREFIX
import { chromium } from 'playwright';

const [url, out] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: install-lab-screenshot.mjs URL OUT-PREFIX');
  process.exit(2);
}
// As playwright.config.ts launches it: the system's Chromium, and nothing of its own on the network.
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  for (const colorScheme of ['light', 'dark']) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, colorScheme });
    await page.goto(url);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'System DNS' }).click();
    await page.getByRole('heading', { name: /^Private DNS is (on|off|paused)/ }).waitFor({ timeout: 15_000 });
    // The leak test, as a user would run it here: a fresh name through the machine's resolver.
    await page.getByRole('button', { name: 'Run leak test' }).click();
    await page.getByText(/No leak found|Lookups can leak/).first().waitFor({ timeout: 30_000 });
    // Done when the button is back (a result kept from an earlier run shows at once).
    await page.getByRole('button', { name: 'Run leak test' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: `${out}-${colorScheme}.png`, fullPage: true });
    const heading = await page.getByRole('heading', { name: /^Private DNS is/ }).textContent();
    const leak = await page.getByText(/No leak found|Lookups can leak/).first().textContent();
    console.log(`${colorScheme}: ${heading?.trim()}; leak test: ${leak?.trim()}`);
    await page.close();
  }
} finally {
  await browser.close();
}
