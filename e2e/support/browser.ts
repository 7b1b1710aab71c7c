import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { emulatorControl } from '@syncline/emulators';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { REPO_ROOT } from '../../apps/sync-api/src/testing/processes';
import { DESKTOP, launchBrowser } from './chromium';
import type { SyncSystem } from './system';
import { waitFor } from './wait';

// The browser tier: Debian's Chromium driven by playwright-core, headless and kept off the
// network, against a running system that serves the built app (apps/web/dist) from its API.

export { CHROMIUM_ARGS, CHROMIUM_PATH, DESKTOP, launchBrowser, PHONE } from './chromium';

/** One browser for a file's tests, closed after them. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('the browser did not start (see beforeAll)');
    return browser;
  };
}

/** A fresh browser profile (its own cookies) on the system's origin. */
export async function newContext(
  browser: Browser,
  s: SyncSystem,
  viewport: { width: number; height: number } = DESKTOP,
  /** A signed-in profile's cookies (`context.storageState()`), to open the app as that person again. */
  storageState?: Awaited<ReturnType<BrowserContext['storageState']>>,
): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL: s.urls.api,
    viewport,
    ...(storageState ? { storageState } : {}),
    locale: 'en-US',
    timezoneId: 'UTC',
    // Microsoft's sign-in pages are the emulator's, over HTTPS under the tests' own authority,
    // which Chromium is not told of (Node's processes trust it through NODE_EXTRA_CA_CERTS).
    ignoreHTTPSErrors: true,
  });
  context.setDefaultTimeout(15_000);
  return context;
}

/** The newest sign-in link mailed to `email` after `since` (the emulators' catch-all). */
export async function mailedLink(s: SyncSystem, email: string, since: number): Promise<string> {
  const control = emulatorControl(s.urls.google);
  const mail = await waitFor(() => control.mail.messages(email), {
    describe: `a sign-in mail to ${email}`,
    until: (messages) => messages.some((m) => Date.parse(m.receivedAt) >= since - 1_000),
    timeoutMs: 15_000,
  });
  const newest = mail.find((m) => Date.parse(m.receivedAt) >= since - 1_000)!;
  const link = /https?:\/\/[^\s"<>]+\/sign-in\/link#token=[A-Za-z0-9_-]+/.exec(
    newest.text ?? newest.html ?? '',
  )?.[0];
  if (!link) throw new Error(`no sign-in link in the mail to ${email}: ${newest.text ?? newest.html}`);
  return link;
}

/**
 * Signs in as a person would: asks for a link on the sign-in page, opens the mailed link, and
 * lands on the app (or on `returnTo`).
 */
export async function signInByLink(page: Page, s: SyncSystem, email: string, returnTo = '/'): Promise<void> {
  const since = Date.now();
  await page.goto(`/sign-in?returnTo=${encodeURIComponent(returnTo)}`);
  await page.getByLabel(/email/i).first().fill(email);
  await page.getByRole('button', { name: /email me a link/i }).click();
  await page.getByText(/check your inbox/i).waitFor();
  await page.goto(await mailedLink(s, email, since));
  await page.waitForURL((url) => !url.pathname.startsWith('/sign-in'));
}

/** axe on the page as it stands: no serious or critical violation. */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  // Colours are judged once transitions end: a dialog fading in is paler than it will be.
  // Endless ones (spinners, indeterminate bars) never end and are left out.
  await page.waitForFunction(() => {
    // The page's own globals (the e2e tier compiles without the DOM's types).
    type Running = { playState: string; effect: { getComputedTiming(): { iterations?: number } } | null };
    const { document } = globalThis as unknown as { document: { getAnimations(): Running[] } };
    return document
      .getAnimations()
      .every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Infinity);
  });
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  const bad = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(' | ')})`,
    );
  expect(bad, `accessibility of ${what}`).toEqual([]);
}

/** Screenshots for the README, written when SYNCLINE_SCREENSHOTS=1 (npm run screenshots). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.SYNCLINE_SCREENSHOTS !== '1') return;
  const dir = join(REPO_ROOT, 'docs', 'screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
}
