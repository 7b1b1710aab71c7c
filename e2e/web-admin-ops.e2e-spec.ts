import { emulatorControl } from '@syncline/emulators';
import type { BrowserContext, Page } from 'playwright-core';
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
import { grantCredentials } from './support/emulator-client';
import { useSystem, waitFor } from './support/system';

// The admin's operations pages in Chromium against the whole system on the emulators: a write
// HubSpot refuses for good becomes a dead letter, is fixed and retried from the page; members
// and API keys are managed and the audit log shows it all as the admin's; a salesperson finds
// no admin page open to them.

const PORTAL_A = 3401;
const PORTAL_B = 3402;
const ADMIN_EMAIL = 'admin@e2e.test';
const SALES = { email: 'sam.rivera@e2e.test', name: 'Sam Rivera' };
const ADA = 'ada.lovelace@analytical.example';
const ADMIN_PAGES = [
  '/admin/connections',
  '/admin/health',
  '/admin/policies/person',
  '/admin/replays',
  '/admin/dead-letters',
  '/admin/audit-log',
  '/admin/api-keys',
  '/admin/members',
];

interface PersonBody {
  id: string;
  fields: Record<string, unknown>;
}

describe('the admin operations pages in Chromium', () => {
  const system = useSystem({
    label: 'web_admin_ops',
    workers: 1,
  });
  const browser = useBrowser();

  const contact = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await system().emulator.hubspot.objects(portal, 'contacts')).find(
      (c) => c.properties.email?.toLowerCase() === email.toLowerCase(),
    );
  const personByEmail = async (email: string): Promise<PersonBody> => {
    const res = await system().api<{ data: PersonBody[] }>(
      'GET',
      `/api/v1/people?email=${encodeURIComponent(email)}`,
    );
    const found = res.body.data[0];
    if (!found) throw new Error(`no person ${email} in the API`);
    return found;
  };

  // The admin signs in once by a mailed link; the other journeys open the app with the cookies.
  let admin: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;
  const asAdmin = async (viewport = DESKTOP) => {
    if (!admin) throw new Error('the admin did not sign in (the first journey failed)');
    const context = await newContext(browser(), system(), viewport, admin);
    return { context, page: await context.newPage() };
  };
  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });

  beforeAll(async () => {
    const s = system();
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A });
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B });
    for (const portal of [PORTAL_A, PORTAL_B])
      await s.emulator.hubspot.createContact(portal, {
        email: ADA,
        firstname: 'Ada',
        lastname: 'Lovelace',
        jobtitle: 'Analyst',
      });
    await s.connect('hubspot', String(PORTAL_A), grantCredentials(a), { displayName: 'CRM A' });
    await s.connect('hubspot', String(PORTAL_B), grantCredentials(b), { displayName: 'CRM B' });
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B);
    // Settled: Ada is one person, known to both CRMs.
    await waitFor(() => personByEmail(ADA).catch(() => undefined), {
      until: (p) => p !== undefined,
      timeoutMs: 60_000,
      describe: 'Ada in the API',
    });
    await waitFor(
      async () =>
        (
          await s.query<{ n: number }>(
            `SELECT count(DISTINCT connection_id)::int AS n FROM source_link WHERE workspace_id = $1`,
            [s.workspace.workspaceId],
          )
        )[0]?.n,
      { until: (n) => n === 2, timeoutMs: 60_000, describe: 'Ada linked to both CRMs' },
    );
    const invited = await s.api('POST', '/api/v1/members', { ...SALES, role: 'sales' });
    expect(invited.status).toBe(201);
  }, 180_000);

  it('a write HubSpot refuses becomes a dead letter; fixed, it is retried from the page and arrives', async () => {
    const s = system();
    const context = await newContext(browser(), s, DESKTOP);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.urls.api });
    const page = await context.newPage();
    try {
      await signInByLink(page, s, ADMIN_EMAIL, '/admin/dead-letters');
      await heading(page, 'Dead letters').waitFor();
      admin = await context.storageState();
      await page.getByText('No open dead letters').waitFor();
      await expectAccessible(page, 'the dead letters page, empty');

      // CRM B refuses every write from now on, as HubSpot refuses a value it does not accept.
      await s.emulator.fault({ service: 'hubspot', kind: 'validation-error', account: PORTAL_B });
      const ada = await personByEmail(ADA);
      await page.goto(`/people/${ada.id}`);
      const jobTitle = page.getByRole('group', { name: 'Job title', exact: true });
      await jobTitle.getByRole('button', { name: 'Edit Job title' }).click();
      await jobTitle.getByRole('textbox', { name: 'Job title' }).fill('Chief Analyst');
      await jobTitle.getByRole('button', { name: 'Save' }).click();
      // CRM A takes it; CRM B's refusal is dead-lettered.
      await waitFor(async () => (await contact(PORTAL_A, ADA))?.properties.jobtitle, {
        until: (title) => title === 'Chief Analyst',
        timeoutMs: 30_000,
        describe: 'the edit in CRM A',
      });
      await waitFor(
        async () =>
          s.query<{ id: string }>(
            `SELECT id::text FROM dead_letter WHERE workspace_id = $1 AND status = 'open'`,
            [s.workspace.workspaceId],
          ),
        { until: (rows) => rows.length === 1, timeoutMs: 30_000, describe: "CRM B's refusal dead-lettered" },
      );
      expect((await contact(PORTAL_B, ADA))?.properties.jobtitle).toBe('Analyst');

      // The admin banner says so, on any page, and leads to the letters.
      await page.goto('/people');
      const banner = page.getByRole('status').filter({ hasText: 'Syncing needs an admin' });
      await banner.getByText('Some changes could not be applied').waitFor();
      await banner.getByRole('link', { name: 'Open dead letters' }).click();
      await heading(page, 'Dead letters').waitFor();
      const letter = page.getByRole('listitem', { name: /Validation from CRM B/ });
      await letter.waitFor();
      await expect.poll(() => letter.textContent()).toContain('Property values were not valid');

      // Its details: the full error, what failed, and Copy error.
      await letter.getByRole('button', { name: 'Details' }).click();
      await letter.getByText(/pending write/).waitFor();
      await expect
        .poll(() => letter.getByLabel("The letter's payload").textContent())
        .toContain('Chief Analyst');
      await letter.getByRole('button', { name: 'Copy error' }).click();
      await letter.getByRole('button', { name: 'Copied' }).waitFor();
      const copied = await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      );
      expect(copied).toMatch(/^Validation: .*Property values were not valid/);
      expect(copied).toContain('connection: CRM B');
      await expectAccessible(page, 'the dead letters page with a letter open');
      await page.setViewportSize(PHONE);
      await letter.getByRole('button', { name: 'Retry' }).waitFor();
      await expectAccessible(page, 'the dead letters page on a phone');
      await page.setViewportSize(DESKTOP);
      await screenshot(page, 'admin-dead-letters');

      // The cause fixed, Retry: the write reaches CRM B and the letter leaves the open list.
      await s.emulator.clearFaults();
      await letter.getByRole('button', { name: 'Retry' }).click();
      await page.getByText('No open dead letters').waitFor({ timeout: 15_000 });
      await waitFor(async () => (await contact(PORTAL_B, ADA))?.properties.jobtitle, {
        until: (title) => title === 'Chief Analyst',
        timeoutMs: 30_000,
        describe: 'the retried write in CRM B',
      });
      await page.getByRole('combobox', { name: 'Status' }).click();
      await page.getByRole('option', { name: 'Retried' }).click();
      await page.waitForURL(/status=retried/);
      await page
        .getByRole('listitem', { name: /Validation from CRM B/ })
        .getByText('retried')
        .first()
        .waitFor();

      // Several at once: select every letter matching, then discard them after a confirm.
      for (const job of ['pull.1', 'pull.2'])
        await s.query(
          `INSERT INTO dead_letter (id, workspace_id, source, payload, error_code, error_message, attempts)
           VALUES (gen_random_uuid(), $1, 'queue', $2::jsonb, 'JobFailed', 'the job ran out of attempts', 5)`,
          [s.workspace.workspaceId, JSON.stringify({ queue: 'pull', job: 'connection.pull', jobId: job })],
        );
      await page.goto('/admin/dead-letters');
      await expect.poll(() => page.getByRole('listitem', { name: /JobFailed/ }).count()).toBe(2);
      await page.getByRole('button', { name: 'Select all 2 matching' }).click();
      await page.getByText('2 letters selected').waitFor();
      await page.getByRole('button', { name: 'Discard selected' }).click();
      const dialog = page.getByRole('dialog', { name: 'Discard 2 letters?' });
      await dialog.getByText(/nothing is redone/).waitFor();
      await expectAccessible(page, 'the bulk discard dialog');
      await dialog.getByRole('button', { name: 'Discard 2 letters' }).click();
      await page.getByText('No open dead letters').waitFor();
      expect(
        await s.query(`SELECT status::text FROM dead_letter WHERE workspace_id = $1 ORDER BY status`, [
          s.workspace.workspaceId,
        ]),
      ).toEqual([{ status: 'discarded' }, { status: 'discarded' }, { status: 'retried' }]);
    } finally {
      await context.close();
    }
  });

  it('the admin invites a member, changes their role and is told why the last admin cannot step down', async () => {
    const { context, page } = await asAdmin();
    try {
      await page.goto('/admin/members');
      await heading(page, 'Members').waitFor();
      await page.getByRole('cell', { name: SALES.email }).waitFor();
      await expectAccessible(page, 'the members page');

      const invite = page.getByRole('region', { name: 'Invite a member' });
      await invite.getByRole('textbox', { name: 'Email' }).fill('new.rep@e2e.test');
      await invite.getByRole('textbox', { name: 'Name (optional)' }).fill('Nia Rep');
      await invite.getByRole('button', { name: 'Send invitation' }).click();
      const row = page.getByRole('row', { name: /new\.rep@e2e\.test/ });
      await row.getByText('Invited').waitFor();
      await waitFor(() => emulatorControl(system().urls.google).mail.messages('new.rep@e2e.test'), {
        until: (mail) => mail.length > 0,
        describe: 'the invitation mailed',
      });

      // Sales to admin, after a confirm that says what an admin can do.
      await row.getByRole('combobox', { name: 'Role of Nia Rep' }).click();
      await page.getByRole('option', { name: 'Admin' }).click();
      const confirm = page.getByRole('dialog', { name: 'Make Nia Rep an admin?' });
      await confirm.getByText(/can manage connections/).waitFor();
      await confirm.getByRole('button', { name: 'Make admin' }).click();
      await expect
        .poll(() => row.getByRole('combobox', { name: 'Role of Nia Rep' }).inputValue())
        .toBe('Admin');

      // The only active admin (Nia has not signed in yet) cannot make themselves sales.
      const me = page.getByRole('row', { name: /\(you\)/ });
      await me.getByRole('combobox', { name: /^Role of / }).click();
      await page.getByRole('option', { name: 'Sales' }).click();
      await page.getByRole('dialog').getByText('You will no longer see the admin pages.').waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Make sales' }).click();
      const refused = page.getByRole('alert').filter({ hasText: 'The workspace needs an admin' });
      await refused.getByText(/Make another member admin first/).waitFor();
      await expect.poll(() => me.getByRole('combobox', { name: /^Role of / }).inputValue()).toBe('Admin');
      await expectAccessible(page, 'the members page with a refusal');

      // On a phone too: the list and the invite form fit.
      await page.setViewportSize(PHONE);
      await page.getByRole('row', { name: /new\.rep@e2e\.test/ }).waitFor();
      await expectAccessible(page, 'the members page on a phone');
      await page.setViewportSize(DESKTOP);

      // Removing her: the confirm says what it ends.
      await row.getByRole('button', { name: 'Remove Nia Rep' }).click();
      const remove = page.getByRole('dialog', { name: 'Remove Nia Rep?' });
      await remove.getByText(/invitation is withdrawn/).waitFor();
      await remove.getByRole('button', { name: 'Remove member' }).click();
      await expect.poll(() => page.getByRole('row', { name: /new\.rep@e2e\.test/ }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('the admin creates an API key (its secret shown once) and revokes it', async () => {
    const { context, page } = await asAdmin();
    try {
      await page.goto('/admin/api-keys');
      await heading(page, 'API keys').waitFor();
      await page.getByRole('button', { name: 'Create a key' }).click();
      const create = page.getByRole('dialog', { name: 'Create an API key' });
      await create.getByRole('textbox', { name: 'Name' }).fill('Nightly export');
      await create.getByRole('radio', { name: /^Sales/ }).check();
      await create.getByRole('button', { name: 'Create key' }).click();
      const secret = page.getByRole('dialog', { name: 'Key “Nightly export” created' });
      await secret.getByText(/only time the key is shown/).waitFor();
      const key = (await secret.getByLabel('The new API key').textContent())?.trim() ?? '';
      expect(key).toMatch(/^sk_[A-Za-z0-9]+_[A-Za-z0-9_-]+$/);
      await expectAccessible(page, 'the new key dialog');
      // It works, as a sales key.
      const people = await fetch(`${system().urls.api}/api/v1/people`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(people.status).toBe(200);
      await secret.getByRole('button', { name: 'I have stored it' }).click();
      await expect.poll(() => page.content()).not.toContain(key);
      const row = page.getByRole('row', { name: /Nightly export/ });
      await row.getByText('Active').waitFor();
      await expectAccessible(page, 'the API keys page');
      await page.setViewportSize(PHONE);
      await row.getByRole('button', { name: 'Revoke Nightly export' }).waitFor();
      await expectAccessible(page, 'the API keys page on a phone');
      await page.setViewportSize(DESKTOP);

      await row.getByRole('button', { name: 'Revoke Nightly export' }).click();
      const confirm = page.getByRole('dialog', { name: 'Revoke “Nightly export”?' });
      await confirm.getByText(/refused from its next request/).waitFor();
      await confirm.getByRole('button', { name: 'Revoke key' }).click();
      await row.getByText('Revoked').waitFor();
      const refused = await fetch(`${system().urls.api}/api/v1/people`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(refused.status).toBe(401);
    } finally {
      await context.close();
    }
  });

  it('the audit log shows all this as the admin’s, filtered by action', async () => {
    const { context, page } = await asAdmin();
    try {
      await page.goto('/admin/audit-log');
      await heading(page, 'Audit log').waitFor();
      const table = page.getByRole('table', { name: 'Audit log' });
      for (const action of [
        'Retried a dead letter',
        'Discarded a dead letter',
        'Invited a member',
        "Changed a member's role",
        'Removed a member',
        'Created an API key',
        'Revoked an API key',
      ])
        await table
          .getByRole('row', { name: new RegExp(`${ADMIN_EMAIL}.*${action.replace(/'/g, '.')}`) })
          .first()
          .waitFor();
      await expectAccessible(page, 'the audit log');
      await page.setViewportSize(PHONE);
      await table
        .getByRole('row', { name: /Created an API key/ })
        .first()
        .waitFor();
      await expectAccessible(page, 'the audit log on a phone');
      await page.setViewportSize(DESKTOP);

      await page.getByRole('combobox', { name: 'Action' }).click();
      await page.getByRole('option', { name: 'Created an API key' }).click();
      await page.waitForURL(/action=api_key\.created/);
      await expect.poll(() => table.getByRole('row').count()).toBe(2); // the header and one entry
      const entry = table.getByRole('row', { name: /Created an API key/ });
      await entry.getByRole('button', { name: /^Show details/ }).click();
      await page.getByText('name: Nightly export').waitFor();
      await page.getByText('role: sales').waitFor();
      await expectAccessible(page, 'the audit log, filtered, an entry open');

      // The filter is in the URL: a reload keeps it.
      await page.reload();
      await expect
        .poll(() => page.getByRole('combobox', { name: 'Action' }).inputValue())
        .toBe('Created an API key');
      await expect.poll(() => table.getByRole('row').count()).toBe(2);
    } finally {
      await context.close();
    }
  });

  it('a salesperson sees no admin navigation, and "Admins only" at every admin URL', async () => {
    const context = await newContext(browser(), system(), PHONE);
    const page = await context.newPage();
    const adminCalls: string[] = [];
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (/^\/api\/v1\/(dead-letters|audit-log|api-keys|health|replays|policies)/.test(path))
        adminCalls.push(path);
    });
    try {
      await signInByLink(page, system(), SALES.email, '/people');
      await heading(page, 'People').waitFor();
      await page.setViewportSize(DESKTOP);
      expect(await page.getByRole('navigation', { name: 'Admin' }).count()).toBe(0);
      expect(await page.getByRole('link', { name: 'Dead letters' }).count()).toBe(0);
      for (const path of ADMIN_PAGES) {
        await page.goto(path);
        await heading(page, 'Admins only').waitFor();
        expect(await page.getByRole('navigation', { name: 'Admin' }).count(), path).toBe(0);
      }
      await expectAccessible(page, 'Admins only');
      // No admin data was asked for on the way.
      expect(adminCalls).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
