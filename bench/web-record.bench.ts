import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { REPO_ROOT } from '../apps/sync-api/src/testing/processes';
import { launchBrowser } from '../e2e/support/chromium';
import { seedPeople } from './people-seed';
import { emit, log, percentile } from './support';
import { startWebBenchStack } from './web-stack';

/**
 * `web-record`: in headless Chromium, from navigation to a person's fields on screen (the first
 * animation frame that shows the record's email, on the browser's clock), on a
 * workspace of 100,000 people; the API process serves the built app (apps/web/dist, built by
 * `npm run web:build`) and the data. Warm: one signed-in browser profile whose cache holds the
 * app. Cold: a fresh profile per load (the session cookie alone carried over), so every load
 * fetches the app's JavaScript again. Also the app's initial JavaScript, gzipped, as
 * index.html loads it (its module script and modulepreloads).
 */

const PREFIX = 'syncline-bench-web';

/** The JavaScript index.html makes the browser load before the first page renders, gzipped. */
export function initialJsKbGz(dist = join(REPO_ROOT, 'apps/web/dist')): number {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const files = new Set<string>();
  for (const m of html.matchAll(/<script[^>]+type="module"[^>]+src="([^"]+)"/g)) files.add(m[1]!);
  for (const m of html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)) files.add(m[1]!);
  if (files.size === 0) throw new Error('index.html loads no module script');
  let bytes = 0;
  for (const file of files) bytes += gzipSync(readFileSync(join(dist, file.replace(/^\//, '')))).length;
  return Number((bytes / 1024).toFixed(1));
}

/** Where a load's time went, in ms from the navigation's start (the browser's own clock). */
interface Phases {
  html: number;
  scripts: number;
  session: number;
  record: number;
  shown: number;
}

/**
 * ms from navigation to the record's email shown in its field, on the browser's own clock: the
 * page checks for it on every animation frame and notes the frame's time from the navigation's
 * start (so the measure does not include the test driver's round trips to the browser). Also
 * where the time went.
 */
async function loadRecord(page: Page, id: string, email: string, phases?: Phases[]): Promise<number> {
  await page.goto(`/people/${id}`, { waitUntil: 'commit' });
  // Run in the page on every frame (a function, not a string: the app's CSP forbids eval).
  const shown = await page.waitForFunction(
    (mail: string) => {
      const doc = (
        globalThis as unknown as {
          document: { querySelector(s: string): { textContent: string | null } | null };
        }
      ).document;
      const group = doc.querySelector('[role="group"][aria-label="Email"]');
      return group?.textContent?.includes(mail) ? performance.now() : null;
    },
    email,
    { polling: 'raf', timeout: 30_000 },
  );
  const elapsed = (await shown.jsonValue()) as number;
  if (phases) {
    phases.push(
      await page.evaluate<Phases>(`(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const resources = performance.getEntriesByType('resource');
        const end = (test) => Math.max(0, ...resources.filter((r) => test(r.name)).map((r) => r.responseEnd));
        return {
          html: nav ? nav.responseEnd : 0,
          scripts: end((n) => n.endsWith('.js')),
          session: end((n) => n.includes('/api/v1/auth/session')),
          record: end((n) => n.includes('/api/v1/people/${id}') && !n.includes('/timeline') && !n.includes('/history')),
          shown: ${elapsed},
        };
      })()`),
    );
  }
  return elapsed;
}

/** The median of each phase, for the log. */
const medianPhases = (all: Phases[]): Record<string, number> => {
  const keys = ['html', 'scripts', 'session', 'record', 'shown'] as const;
  return Object.fromEntries(
    keys.map((k) => {
      const sorted = all.map((p) => p[k]).sort((a, b) => a - b);
      return [k, Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)];
    }),
  );
};

export async function run(args: Record<string, number>): Promise<void> {
  const people = args.people ?? 100_000;
  const loads = args.loads ?? 50;
  const stack = await startWebBenchStack({
    database: 'syncline_bench_web_record',
    redisPrefix: PREFIX,
    seed: async (pool, workspaceId) => {
      const seedStart = Date.now();
      const { sample } = await seedPeople(pool, workspaceId, people, loads * 3);
      log(`seeded ${people} people in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
      return sample;
    },
  });
  const { api, signInUrl: url, seeded: sample } = stack;

  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const options = { baseURL: api, viewport: { width: 1280, height: 860 } };
    const warm: BrowserContext = await browser.newContext(options);
    const page = await warm.newPage();
    await page.goto(url);
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'), { timeout: 30_000 });
    const state = await warm.storageState();

    // Warm up the API (JIT, pools) and the browser's cache, then measure.
    for (const person of sample.slice(0, 5)) await loadRecord(page, person.id, person.email);
    const warmTimes: number[] = [];
    const warmPhases: Phases[] = [];
    for (const person of sample.slice(5, 5 + loads))
      warmTimes.push(await loadRecord(page, person.id, person.email, warmPhases));
    log(`warm, median ms from navigation: ${JSON.stringify(medianPhases(warmPhases))}`);
    await warm.close();

    const coldTimes: number[] = [];
    const coldPhases: Phases[] = [];
    for (const person of sample.slice(5 + loads, 5 + loads * 2)) {
      const cold = await browser.newContext({ ...options, storageState: state });
      const coldPage = await cold.newPage();
      coldTimes.push(await loadRecord(coldPage, person.id, person.email, coldPhases));
      await cold.close();
    }
    log(`cold, median ms from navigation: ${JSON.stringify(medianPhases(coldPhases))}`);
    warmTimes.sort((a, b) => a - b);
    coldTimes.sort((a, b) => a - b);
    const round = (n: number) => Math.round(n);
    emit({
      bench: 'web-record',
      people,
      loads,
      p95_ms: round(percentile(warmTimes, 95)),
      p50_ms: round(percentile(warmTimes, 50)),
      cold_p95_ms: round(percentile(coldTimes, 95)),
      cold_p50_ms: round(percentile(coldTimes, 50)),
      initial_js_kb_gz: initialJsKbGz(),
      target_p95_ms: 800,
      target_initial_js_kb_gz: 250,
    });
  } finally {
    await browser?.close();
    stack.stop();
  }
}
