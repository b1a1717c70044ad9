/// <reference lib="dom" />
import type { Page } from '@playwright/test';

/**
 * Resolves once the page has painted twice after the last change (a resize, a colour scheme, a scroll, a
 * section opened): the first frame runs the resize and scroll observers (the charts, the virtualised log),
 * the second paints what they and the render they start changed. What a screenshot or an accessibility
 * scan then sees is the page as settled, without a guessed sleep. Not for a page on Playwright's clock,
 * whose animation frames only come when the test moves it.
 */
export async function painted(page: Page): Promise<void> {
  await page.evaluate(
    () =>
      new Promise<void>((resolve) => {
        requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
      }),
  );
}
