import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { REPO_ROOT } from '../../apps/sync-api/src/testing/processes';

// Debian's Chromium driven by playwright-core, for the browser tests and the web benches alike
// (no test runner here: the benches import it too).

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Headless, no sandbox (CI runs as root), and nothing that calls home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** A phone between meetings. */
export const PHONE = { width: 375, height: 740 };
export const DESKTOP = { width: 1280, height: 860 };

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (.ci/run does)`);
  }
  if (!existsSync(join(REPO_ROOT, 'apps/web/dist/index.html'))) {
    throw new Error('the web app is not built: npm run web:build (npm test does)');
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
