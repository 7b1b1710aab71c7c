import type { BrowserContext } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DESKTOP,
  expectAccessible,
  newContext,
  PHONE,
  screenshot,
  signInByLink,
  useBrowser,
} from './support/browser';
import { useSystem, waitFor } from './support/system';

// Sync health over time and the queues, in Chromium against the whole system: the workers
// sample a HubSpot portal's connection every 2 s (HEALTH_SAMPLE_INTERVAL_MS), the admin reads
// the cards and charts of /admin/health and opens the BullMQ dashboard at /admin/queues; a
// salesperson and a visitor without a session are kept out of it.

const PORTAL = 3601;
const ADMIN_EMAIL = 'admin@e2e.test';
const SALES_EMAIL = 'sam.sales@health-e2e.test';
const SAMPLE_MS = 2_000;

describe('an admin watches the sync over time and its queues, in Chromium', () => {
  const system = useSystem({
    label: 'web_health',
    workers: 1,
    env: {
      HEALTH_SAMPLE_INTERVAL_MS: String(SAMPLE_MS),
      ...(process.env.WEB_DIST_DIR ? { WEB_DIST_DIR: process.env.WEB_DIST_DIR } : {}),
    },
  });
  const browser = useBrowser();
  let connectionId = '';
  let admin: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;

  const samples = () =>
    system().query<{ sampled_at: Date; status: string }>(
      'SELECT sampled_at, status FROM sync_health_sample WHERE connection_id = $1 ORDER BY sampled_at',
      [connectionId],
    );

  beforeAll(async () => {
    const s = system();
    const grant = await s.emulator.hubspot.createPortal({ portalId: PORTAL });
    await s.emulator.hubspot.createContact(PORTAL, {
      email: 'ada.lovelace@analytical.example',
      firstname: 'Ada',
      lastname: 'Lovelace',
    });
    connectionId = (
      await s.connect(
        'hubspot',
        String(PORTAL),
        {
          accessToken: grant.accessToken,
          refreshToken: grant.refreshToken,
          expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
        },
        { displayName: 'CRM A' },
      )
    ).id;
    expect((await s.api('POST', '/api/v1/members', { email: SALES_EMAIL, role: 'sales' })).status).toBe(201);
    // Live, and sampled over 24 s: two points of the 1-hour charts (12 s buckets) at least.
    await waitFor(samples, {
      until: (rows) =>
        rows.some((r) => r.status === 'live') &&
        rows.length >= 2 &&
        rows[rows.length - 1]!.sampled_at.getTime() - rows[0]!.sampled_at.getTime() >= 24_000,
      timeoutMs: 90_000,
      describe: '24 s of samples of the live connection',
    });
    const context = await newContext(browser(), s);
    const page = await context.newPage();
    await signInByLink(page, s, ADMIN_EMAIL, '/admin/health');
    admin = await context.storageState();
    await context.close();
  }, 180_000);

  it('samples each interval once, on its boundary', async () => {
    const rows = await samples();
    const times = rows.map((r) => r.sampled_at.getTime());
    expect(new Set(times).size).toBe(times.length);
    for (const t of times) expect(t % SAMPLE_MS).toBe(0);
  });

  it("shows the connection's card and the charts of its samples, on a desktop and a phone", async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const context = await newContext(browser(), system(), viewport, admin);
      const page = await context.newPage();
      await page.goto('/admin/health');
      await page.getByRole('heading', { level: 1, name: 'Sync health' }).waitFor();
      const card = page.getByRole('article', { name: 'CRM A' });
      await card.getByText('Live').waitFor();
      await card.getByText('Pending writes').waitFor();
      // The last hour: the samples of this run, in 12 s buckets.
      const asked = page.waitForResponse((r) => r.url().includes('/health/sync/history?hours=1&'));
      await page
        .getByRole('radiogroup', { name: 'Time range' })
        .locator('label', { hasText: /^1 h$/ })
        .click();
      expect((await asked).status()).toBe(200);
      // The charts: drawn (a flat line of zeros has no height: attached, not "visible"), each named
      // by its title, its values readable as a table.
      const consumer = page.getByRole('figure', { name: 'Changes waiting to be merged' });
      await consumer.locator('.recharts-line-curve').first().waitFor({ state: 'attached' });
      await expect(consumer.getByText(/^Consumer lag: \d+ events now/).textContent()).resolves.toBeTruthy();
      const lag = page.getByRole('figure', { name: 'Lag and watermark delay: CRM A' });
      await lag.locator('.recharts-line-curve').first().waitFor({ state: 'attached' });
      await expect(lag.getByRole('combobox', { name: 'Connection' }).inputValue()).resolves.toBe('CRM A');
      expect(
        await lag
          .getByRole('table', { name: /Lag in events and watermark delay/ })
          .locator('tbody tr')
          .count(),
      ).toBeGreaterThan(0);
      await page.getByRole('figure', { name: 'Writes to connected systems' }).waitFor();
      await expectAccessible(page, `the health page (${viewport.width} px)`);
      await screenshot(page, `admin-health-${viewport === PHONE ? 'phone' : 'desktop'}`);
      await context.close();
    }
  });

  it('opens the queues dashboard for the admin, its scripts allowed by its own CSP', async () => {
    const context = await newContext(browser(), system(), DESKTOP, admin);
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (m) => {
      // Its web font stylesheet (Google's) is refused on purpose; nothing else may be.
      if (/Content Security Policy/i.test(m.text()) && !/fonts\.googleapis/.test(m.text()))
        refused.push(m.text());
    });
    const res = await page.goto('/admin/queues');
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    // The dashboard's own UI lists the workers' queues once its scripts ran.
    for (const queue of ['maintenance', 'pull', 'push', 'replay'])
      await page
        .getByRole('link', { name: new RegExp(`^${queue}`, 'i') })
        .first()
        .waitFor({ timeout: 30_000 });
    expect(refused).toEqual([]);
    await screenshot(page, 'admin-queues');
    await context.close();
  });

  it('keeps a salesperson and a visitor without a session out of the queues', async () => {
    const visitor = await newContext(browser(), system());
    const page = await visitor.newPage();
    await page.goto('/admin/queues');
    await page.waitForURL((url) => url.pathname === '/sign-in');
    expect(new URL(page.url()).searchParams.get('returnTo')).toBe('/admin/queues');

    await signInByLink(page, system(), SALES_EMAIL, '/people');
    const res = await page.goto('/admin/queues');
    expect(res?.status()).toBe(403);
    expect(await res?.json()).toMatchObject({ error: { code: 'forbidden' } });
    // The health page is the admin's too: the app says so and loads none of its data.
    await page.goto('/admin/health');
    await page
      .getByText(/admins only/i)
      .first()
      .waitFor();
    expect(await page.locator('[data-health-card]').count()).toBe(0);
    await visitor.close();
  });
});
