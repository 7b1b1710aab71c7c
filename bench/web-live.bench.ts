import type { Browser } from 'playwright-core';
import { launchBrowser } from '../e2e/support/chromium';
import { startStack, waitUntil } from './e2e-stack';
import { emit, log, percentile } from './support';

/**
 * `web-live`: a record page open in headless Chromium (the app served by the API, signed in
 * as the workspace's admin), and a person's job title edited in the CRM (the HubSpot emulator,
 * as a person in HubSpot would); the time from the edit to the new value on the open page,
 * carried by the webhook, the sync stage and the API's event stream. One edit at a time.
 */
export async function run(args: Record<string, number>): Promise<void> {
  const edits = args.edits ?? 50;
  const stack = await startStack();
  let browser: Browser | undefined;
  try {
    const PORTAL = 9301;
    const grant = await stack.portal(PORTAL);
    const ada = await stack.emu.hubspot.createContact(PORTAL, {
      email: 'ada.live@bench.example',
      firstname: 'Ada',
      lastname: 'Live',
      jobtitle: 'Start',
    });
    await stack.connect(PORTAL, grant);
    let personId: string | undefined;
    const linked = await waitUntil(async () => {
      const { rows } = await stack.pool.query<{ id: string }>(
        `SELECT id::text FROM entity WHERE entity_type = 'person' AND fields->>'email' = 'ada.live@bench.example'`,
      );
      personId = rows[0]?.id;
      return personId !== undefined;
    }, 60_000);
    if (linked === undefined || !personId) throw new Error('the contact never reached the merged view');

    browser = await launchBrowser();
    const context = await browser.newContext({
      baseURL: stack.apiUrl,
      viewport: { width: 1280, height: 860 },
    });
    const page = await context.newPage();
    await page.goto(await stack.signInLink());
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'), { timeout: 30_000 });
    await page.goto(`/people/${personId}`);
    const title = page.getByRole('group', { name: 'Job title', exact: true });
    await title.getByText('Start').waitFor({ timeout: 30_000 });

    const times: number[] = [];
    for (let i = 0; i < edits + 3; i++) {
      const value = `Title ${i} ${Date.now()}`;
      const started = performance.now();
      await stack.emu.hubspot.updateContact(PORTAL, ada.id, { jobtitle: value });
      await title.getByText(value).waitFor({ timeout: 30_000 });
      // The first three warm the path (JIT, pools) and are not counted.
      if (i >= 3) times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const at = (p: number) => Math.round(percentile(times, p));
    log(
      `web-live: ${times.length} edits, min ${Math.round(times[0]!)} ms, max ${Math.round(times.at(-1)!)} ms`,
    );
    emit({ bench: 'web-live', edits: times.length, p95_ms: at(95), p50_ms: at(50), target_p95_ms: 1_000 });
  } finally {
    await browser?.close();
    await stack.stop();
  }
}
