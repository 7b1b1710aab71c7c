import type { BrowserContext, Locator, Page } from 'playwright-core';
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
import type { HubspotRecord } from './support/emulator-client';
import { useSystem, waitFor } from './support/system';

// The admin's connections page in Chromium against the whole system on the emulators: two
// HubSpot portals and a Google account connected through the providers' consent pages (the
// emulators' "Choose an account"), a connection paused while a person edits in HubSpot, and a
// revoked grant reconnected through consent. Outcomes are read where they land: the page, the
// emulators' CRMs, the API.

const PORTAL_A = 3501;
const PORTAL_B = 3502;
const PORTAL_C = 3503;
const GOOGLE_EMAIL = 'rita.rep@connections-e2e.example';
const ADMIN_EMAIL = 'admin@e2e.test';
const ADA = 'ada.lovelace@analytical.example';
const GRACE = 'grace.hopper@navy.example';
// How the connect names a HubSpot portal: its hub domain (HubSpot's token info).
const NAME_A = `portal-${PORTAL_A}.example.test`;
const NAME_B = `portal-${PORTAL_B}.example.test`;
const NAME_CALENDAR = `Google Calendar ${GOOGLE_EMAIL}`;
const NAME_TASKS = `Google Tasks ${GOOGLE_EMAIL}`;

interface PersonBody {
  id: string;
  fields: Record<string, unknown>;
}
interface ConnectionBody {
  id: string;
  provider: string;
  externalAccountId: string;
  status: string;
  dryRun: boolean;
}

describe('an admin connects systems and keeps them syncing, in Chromium', () => {
  const system = useSystem({
    label: 'web_connections',
    workers: 1,
  });
  const browser = useBrowser();

  let admin: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;
  const asAdmin = async (viewport = DESKTOP) => {
    if (!admin) throw new Error('the admin did not sign in (beforeAll failed)');
    const context = await newContext(browser(), system(), viewport, admin);
    return { context, page: await context.newPage() };
  };

  const contact = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await system().emulator.hubspot.objects(portal, 'contacts')).find(
      (c) => c.properties.email?.toLowerCase() === email,
    );
  const person = async (email: string): Promise<PersonBody | undefined> =>
    (await system().api<{ data: PersonBody[] }>('GET', `/api/v1/people?email=${encodeURIComponent(email)}`))
      .body.data[0];
  const connections = async () =>
    (await system().api<{ data: ConnectionBody[] }>('GET', '/api/v1/connections')).body.data;

  /** When the emulator last answered a request for this portal (ms). */
  const lastRequestAt = async (portal: number): Promise<number> =>
    Math.max(
      0,
      ...(await system().emulator.requests({ service: 'hubspot', account: portal })).map((r) =>
        Date.parse(r.at),
      ),
    );

  const card = (page: Page, name: string): Locator => page.getByRole('article', { name, exact: true });
  const statusOf = (page: Page, name: string) =>
    card(page, name).getByTestId('connection-status').textContent();
  const waitForStatus = (page: Page, name: string, status: string, timeout = 60_000) =>
    expect.poll(() => statusOf(page, name), { timeout, message: `${name} to read ${status}` }).toBe(status);
  /** Opens a connection's Actions menu: its items, in that menu only. */
  const openMenu = async (page: Page, name: string): Promise<Locator> => {
    await card(page, name)
      .getByRole('button', { name: `Actions for ${name}` })
      .click();
    const menu = page.getByRole('menu', { name: `Actions for ${name}` });
    await menu.waitFor();
    return menu;
  };
  const openConnections = async (page: Page) => {
    await page.goto('/admin/connections');
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
  };

  /** The connect dialog through the provider's consent page, back on the connections page. */
  const connectThroughConsent = async (
    page: Page,
    choice: { hubspotAccount: number } | { googleEmail: string },
  ) => {
    await page.getByRole('button', { name: 'Connect a system' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Connect a system' });
    if ('googleEmail' in choice) {
      await dialog.getByRole('radio', { name: 'Google' }).check();
      // Calendar is ticked first; the account's mail and tasks stay out.
      expect(await dialog.getByRole('checkbox', { name: /Calendar/ }).isChecked()).toBe(true);
      await dialog.getByRole('button', { name: 'Continue to Google' }).click();
      await page.waitForURL((url) => url.origin === system().urls.google);
      await page.getByRole('link', { name: choice.googleEmail }).click();
    } else {
      await dialog.getByRole('radio', { name: 'HubSpot' }).check();
      await dialog.getByRole('button', { name: 'Continue to HubSpot' }).click();
      await page.waitForURL((url) => url.origin === system().urls.hubspot);
      await page.getByRole('heading', { name: 'Choose an account' }).waitFor();
      await page.getByRole('link', { name: `Account ${choice.hubspotAccount}` }).click();
    }
    await page.waitForURL((url) => url.origin === system().urls.api && url.pathname === '/admin/connections');
  };

  beforeAll(async () => {
    const s = system();
    await s.emulator.hubspot.createPortal({ portalId: PORTAL_A });
    await s.emulator.hubspot.createPortal({ portalId: PORTAL_B });
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: ADA,
      firstname: 'Ada',
      lastname: 'Lovelace',
      jobtitle: 'Analyst',
    });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: GRACE,
      firstname: 'Grace',
      lastname: 'Hopper',
      jobtitle: 'Rear Admiral',
    });
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B);
    await s.emulator.google.createUser(GOOGLE_EMAIL);
    await s.emulator.google.calendar.create(GOOGLE_EMAIL, {
      summary: 'Pipeline review',
      start: { dateTime: '2030-04-01T09:00:00.000Z' },
      end: { dateTime: '2030-04-01T10:00:00.000Z' },
      attendees: [{ email: ADA }],
    });

    const context = await newContext(browser(), s);
    const page = await context.newPage();
    try {
      await signInByLink(page, s, ADMIN_EMAIL, '/admin/connections');
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
      admin = await context.storageState();
    } finally {
      await context.close();
    }
  }, 120_000);

  it('connects two HubSpot portals and a Google calendar through the consent pages, and watches them reach Live', async () => {
    const { context, page } = await asAdmin();
    try {
      await openConnections(page);
      await page.getByTestId('empty-state').waitFor();
      await expectAccessible(page, 'the connections page, empty');
      await page.getByRole('button', { name: 'Connect a system' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Connect a system' });
      await dialog.getByRole('radio', { name: 'Google' }).check();
      await expectAccessible(page, 'the connect dialog');
      await screenshot(page, 'admin-connect-dialog');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });

      await connectThroughConsent(page, { hubspotAccount: PORTAL_A });
      await page.getByText(`${NAME_A}: reading its history now.`).waitFor();
      await card(page, NAME_A).waitFor();
      // The search that told the page what was connected is gone: a reload says nothing twice.
      await expect.poll(() => new URL(page.url()).search).toBe('');

      await connectThroughConsent(page, { hubspotAccount: PORTAL_B });
      await card(page, NAME_B).waitFor();
      await connectThroughConsent(page, { googleEmail: GOOGLE_EMAIL });
      await card(page, NAME_CALENDAR).waitFor();

      const made = await connections();
      expect(made.map((c) => [c.provider, c.externalAccountId, c.dryRun]).sort()).toEqual([
        ['google-calendar', GOOGLE_EMAIL, false],
        ['hubspot', String(PORTAL_A), false],
        ['hubspot', String(PORTAL_B), false],
      ]);

      for (const name of [NAME_A, NAME_B, NAME_CALENDAR]) await waitForStatus(page, name, 'Live');
      // Live means synced: each portal's person reached the other.
      await waitFor(async () => [await contact(PORTAL_B, ADA), await contact(PORTAL_A, GRACE)], {
        until: ([ada, grace]) => ada !== undefined && grace !== undefined,
        timeoutMs: 30_000,
        describe: 'Ada in portal B and Grace in portal A',
      });
      const live = card(page, NAME_A);
      expect(await live.getByText('Waiting to merge').count()).toBe(1);
      expect(await live.getByText('Writes waiting').count()).toBe(1);
      await expectAccessible(page, 'the connections page with three connections');
      await screenshot(page, 'admin-connections');
    } finally {
      await context.close();
    }
  });

  it('pauses a portal while a person edits in it: nothing arrives until it is resumed', async () => {
    const { context, page } = await asAdmin(PHONE);
    try {
      await openConnections(page);
      await (await openMenu(page, NAME_A)).getByRole('menuitem', { name: 'Pause' }).click();
      await waitForStatus(page, NAME_A, 'Paused', 15_000);
      expect((await connections()).find((c) => c.externalAccountId === String(PORTAL_A))?.status).toBe(
        'paused',
      );

      // A pull already running when the pause landed may finish its page; after that the
      // workers leave portal A alone (a running connection is read about every half second).
      await waitFor(async () => Date.now() - (await lastRequestAt(PORTAL_A)), {
        until: (quietMs) => quietMs > 2_000,
        timeoutMs: 15_000,
        describe: 'the paused portal A to be read no more',
      });
      const pausedAt = Date.now();

      // Someone edits Ada in portal A (paused) and Grace in portal B (running).
      const adaInA = (await contact(PORTAL_A, ADA))!;
      await system().emulator.hubspot.updateContact(PORTAL_A, adaInA.id, { jobtitle: 'Chief Analyst' });
      const graceInB = (await contact(PORTAL_B, GRACE))!;
      await system().emulator.hubspot.updateContact(PORTAL_B, graceInB.id, { jobtitle: 'Admiral' });
      // B's later edit is merged: the sync ran past A's edit, which it did not take in.
      await waitFor(async () => (await person(GRACE))?.fields.jobTitle, {
        until: (title) => title === 'Admiral',
        timeoutMs: 30_000,
        describe: "portal B's edit of Grace in the unified record",
      });
      expect((await person(ADA))?.fields.jobTitle).toBe('Analyst');
      expect((await contact(PORTAL_B, ADA))?.properties.jobtitle).toBe('Analyst');
      // What portal A is owed waits for it, and the page says so.
      expect((await contact(PORTAL_A, GRACE))?.properties.jobtitle).toBe('Rear Admiral');
      await expect
        .poll(() => card(page, NAME_A).getByText('Writes waiting').locator('xpath=..').textContent(), {
          timeout: 15_000,
        })
        .toMatch(/Writes waiting[1-9]/);
      await expectAccessible(page, 'the connections page on a phone, a connection paused');
      await screenshot(page, 'admin-connections-phone');
      // Nothing asked portal A anything while it was paused.
      expect(await lastRequestAt(PORTAL_A)).toBeLessThan(pausedAt);

      await (await openMenu(page, NAME_A)).getByRole('menuitem', { name: 'Resume' }).click();
      await waitForStatus(page, NAME_A, 'Live', 30_000);
      // Both ways now: A's edit reaches the record and portal B, B's reaches portal A.
      await waitFor(
        async () => [
          (await person(ADA))?.fields.jobTitle,
          (await contact(PORTAL_B, ADA))?.properties.jobtitle,
          (await contact(PORTAL_A, GRACE))?.properties.jobtitle,
        ],
        {
          until: ([record, inB, graceInA]) =>
            record === 'Chief Analyst' && inB === 'Chief Analyst' && graceInA === 'Admiral',
          timeoutMs: 30_000,
          describe: "A's edit in the record and portal B, B's edit in portal A",
        },
      );
    } finally {
      await context.close();
    }
  });

  it('a revoked grant shows Action required and the admin banner; reconnecting through consent brings it back to Live', async () => {
    const { context, page } = await asAdmin();
    try {
      await openConnections(page);
      await waitForStatus(page, NAME_B, 'Live');
      await system().emulator.fault({
        service: 'hubspot',
        kind: 'revoke-token',
        account: PORTAL_B,
        count: 1,
      });

      await waitForStatus(page, NAME_B, 'Action required', 45_000);
      const broken = card(page, NAME_B);
      await broken.getByText('Its access was revoked or expired').waitFor();
      const banner = page.getByRole('status').filter({ hasText: 'Syncing needs an admin' });
      await banner.getByText(NAME_B).waitFor({ timeout: 30_000 });
      // The other portal keeps syncing meanwhile.
      expect(await statusOf(page, NAME_A)).toBe('Live');
      await expectAccessible(page, 'the connections page, a connection to reconnect');
      await screenshot(page, 'admin-connections-reconnect');

      const before = (await connections()).map((c) => c.id).sort();
      await broken.getByRole('button', { name: 'Reconnect', exact: true }).click();
      await page.waitForURL((url) => url.origin === system().urls.hubspot);
      await page.getByRole('link', { name: `Account ${PORTAL_B}` }).click();
      await page.waitForURL(
        (url) => url.origin === system().urls.api && url.pathname === '/admin/connections',
      );
      await page.getByText(`${NAME_B}: syncing again from where it stopped.`).waitFor();
      await waitForStatus(page, NAME_B, 'Live', 30_000);
      // The same connection took the new grant: none was added.
      expect((await connections()).map((c) => c.id).sort()).toEqual(before);
      await banner.waitFor({ state: 'detached', timeout: 30_000 });

      // And it syncs: an edit in portal B reaches portal A.
      const graceInB = (await contact(PORTAL_B, GRACE))!;
      await system().emulator.hubspot.updateContact(PORTAL_B, graceInB.id, { jobtitle: 'Fleet Admiral' });
      await waitFor(async () => (await contact(PORTAL_A, GRACE))?.properties.jobtitle, {
        until: (title) => title === 'Fleet Admiral',
        timeoutMs: 30_000,
        describe: "portal B's edit after the reconnect in portal A",
      });
    } finally {
      await context.close();
    }
  });
  it('tries Google Tasks in dry run (its report opens), resyncs the calendar after its dialog, and discards the trial, erasing it', async () => {
    const { context, page } = await asAdmin();
    try {
      await system().emulator.google.tasks.create(GOOGLE_EMAIL, { title: 'Send the proposal to Ada' });
      await openConnections(page);
      await page.getByRole('button', { name: 'Connect a system' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Connect a system' });
      await dialog.getByRole('radio', { name: 'Google' }).check();
      await dialog.getByRole('checkbox', { name: 'Calendar', exact: true }).uncheck();
      await dialog.getByRole('button', { name: 'Continue to Google' }).click();
      // No product: the dialog says so and stays.
      await dialog.getByText('Choose at least one product.').waitFor();
      await dialog.getByRole('checkbox', { name: 'Tasks', exact: true }).check();
      await dialog.getByRole('checkbox', { name: 'Try in dry run first' }).check();
      await dialog.getByRole('button', { name: 'Continue to Google' }).click();
      await page.waitForURL((url) => url.origin === system().urls.google);
      await page.getByRole('link', { name: GOOGLE_EMAIL }).click();
      // Back from consent, a dry run opens its report.
      await page.waitForURL((url) => /^\/admin\/connections\/[0-9a-f-]{36}\/dry-run$/.test(url.pathname));
      const reportId = new URL(page.url()).pathname.split('/')[3];
      const tasks = (await connections()).find((c) => c.provider === 'google-tasks');
      expect(tasks).toMatchObject({ id: reportId, externalAccountId: GOOGLE_EMAIL, dryRun: true });

      await openConnections(page);
      await waitForStatus(page, NAME_TASKS, 'Dry run', 15_000);
      const tasksMenu = await openMenu(page, NAME_TASKS);
      expect(await tasksMenu.getByRole('menuitem', { name: 'Dry-run report' }).getAttribute('href')).toBe(
        `/admin/connections/${reportId}/dry-run`,
      );
      await page.keyboard.press('Escape');
      await tasksMenu.waitFor({ state: 'hidden' });

      // Resync, after a dialog that says what it does.
      await (await openMenu(page, NAME_CALENDAR)).getByRole('menuitem', { name: 'Resync…' }).click();
      const resync = page.getByRole('dialog', { name: `Resync ${NAME_CALENDAR}?` });
      await resync.getByText(/read again from the start/).waitFor();
      await expectAccessible(page, 'the resync dialog');
      await resync.getByRole('button', { name: 'Resync from the start' }).click();
      await page.getByText(`${NAME_CALENDAR} is reading everything again.`).waitFor();
      const audit = await system().api<{ data: { action: string; targetId: string }[] }>(
        'GET',
        '/api/v1/audit-log?action=connection.resync_requested',
      );
      const calendar = (await connections()).find((c) => c.provider === 'google-calendar')!;
      expect(audit.body.data).toContainEqual(
        expect.objectContaining({ action: 'connection.resync_requested', targetId: calendar.id }),
      );
      await waitForStatus(page, NAME_CALENDAR, 'Live', 30_000);

      // Discard the trial: disconnect, erasing what only it knew; erasing asks for its name.
      await (await openMenu(page, NAME_TASKS)).getByRole('menuitem', { name: 'Disconnect…' }).click();
      const disconnect = page.getByRole('dialog', { name: `Disconnect ${NAME_TASKS}?` });
      await disconnect.getByRole('radio', { name: 'Erase it' }).check();
      const erase = disconnect.getByRole('button', { name: 'Disconnect and erase' });
      expect(await erase.isDisabled()).toBe(true);
      await expectAccessible(page, 'the disconnect dialog');
      await disconnect
        .getByRole('textbox', { name: `Type "${NAME_TASKS}" to confirm erasing` })
        .fill(NAME_TASKS);
      await erase.click();
      await waitForStatus(page, NAME_TASKS, 'Disconnected', 15_000);
      expect((await connections()).find((c) => c.id === reportId)?.status).toBe('disconnected');
      // The others are untouched.
      for (const name of [NAME_A, NAME_B, NAME_CALENDAR]) expect(await statusOf(page, name)).toBe('Live');
    } finally {
      await context.close();
    }
  });
  it('connects a portal with a private app token instead: a token of another portal is refused in the dialog', async () => {
    const s = system();
    await s.emulator.hubspot.createPortal({ portalId: PORTAL_C });
    // A private app made in portal C's settings, as an admin there would.
    const made = await fetch(`${s.urls.hubspot}/_emulator/hubspot/portals/${PORTAL_C}/private-apps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(made.status).toBe(201);
    const { accessToken } = (await made.json()) as { accessToken: string };

    const { context, page } = await asAdmin(PHONE);
    try {
      await openConnections(page);
      await page.getByRole('button', { name: 'Connect a system' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Connect a system' });
      await dialog.getByRole('button', { name: 'Use a token instead' }).click();
      await dialog.getByRole('textbox', { name: 'Portal ID' }).fill(String(PORTAL_A));
      await dialog.getByLabel('Private app token').fill(accessToken);
      await dialog.getByRole('textbox', { name: 'Name (optional)' }).fill('CRM Tokyo');
      await expectAccessible(page, 'the token form on a phone');
      await dialog.getByRole('button', { name: 'Connect with token' }).click();
      // HubSpot says the token opens portal C: nothing is stored, the dialog says why.
      await dialog.getByRole('alert').getByText(`not ${PORTAL_A}`).waitFor();
      expect((await connections()).some((c) => c.externalAccountId === String(PORTAL_C))).toBe(false);

      await dialog.getByRole('textbox', { name: 'Portal ID' }).fill(String(PORTAL_C));
      await dialog.getByRole('button', { name: 'Connect with token' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await page.getByText('CRM Tokyo: reading its history now.').waitFor();
      await waitForStatus(page, 'CRM Tokyo', 'Live');
      expect((await connections()).find((c) => c.externalAccountId === String(PORTAL_C))).toMatchObject({
        provider: 'hubspot',
        dryRun: false,
        status: 'live',
      });
      // Synced like the others: Ada reaches the new portal.
      await waitFor(() => contact(PORTAL_C, ADA), {
        until: (c) => c !== undefined,
        timeoutMs: 30_000,
        describe: 'Ada in portal C',
      });
    } finally {
      await context.close();
    }
  });
});
