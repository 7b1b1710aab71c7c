import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, expectAccessible, newContext, PHONE, signInByLink, useBrowser } from './support/browser';
import type { HubspotRecord } from './support/emulator-client';
import { useSystem, waitFor, waitForReconciled } from './support/system';

// An admin in Chromium against the whole system on the emulators: CRM A is live; a second
// HubSpot portal is connected through the app in dry run (the connect dialog, HubSpot's
// account chooser, back to the report), its report read tab by tab, then enabled after the
// confirm, and the sync carries what the report said into both portals. Then CRM A's field
// mappings: a custom field onto a custom property, a refused row marked, a change made
// meanwhile (412), a revision restored.

const PORTAL_A = 3501;
const PORTAL_B = 3502;
const PORTAL_C = 3503;
const ADMIN_EMAIL = 'admin@e2e.test';

interface MappingsBody {
  version: number;
  mappings: { entityType: string; field: string; property: string }[];
}

describe('an admin connects a CRM in dry run and maps its fields, in Chromium', () => {
  const system = useSystem({
    label: 'web_admin_dry_run',
    workers: 1,
  });
  const browser = useBrowser();
  let crmA = '';
  let tokenA = '';
  let admin: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;

  const contact = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await system().emulator.hubspot.objects(portal, 'contacts')).find((c) => c.properties.email === email);
  const asAdmin = async (viewport = DESKTOP) => {
    if (!admin) throw new Error('the admin did not sign in (the first journey failed)');
    const context = await newContext(browser(), system(), viewport, admin);
    return { context, page: await context.newPage() };
  };
  const tab = (page: Page, name: RegExp) => page.getByRole('tab', { name });
  const mappings = async () =>
    (await system().api<MappingsBody>('GET', `/api/v1/connections/${crmA}/mappings`)).body;

  beforeAll(async () => {
    const s = system();
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A, webhooks: true });
    tokenA = a.accessToken;
    for (const [email, firstname, lastname, jobtitle] of [
      ['ada.lovelace@analytical.example', 'Ada', 'Lovelace', 'Analyst'],
      ['alan@bletchley.example', 'Alan', 'Turing', 'Cryptanalyst'],
      ['grace@navy.example', 'Grace', 'Hopper', ''],
    ] as const)
      await s.emulator.hubspot.createContact(PORTAL_A, {
        email,
        firstname,
        lastname,
        ...(jobtitle ? { jobtitle } : {}),
      });
    // Job titles wait for a person when the CRMs disagree: the report shows such a conflict.
    const manual = await s.api('PUT', '/api/v1/policies/person', {
      fields: { jobTitle: { kind: 'manual' } },
    });
    expect(manual.status, JSON.stringify(manual.body)).toBe(200);
    crmA = (
      await s.connect(
        'hubspot',
        String(PORTAL_A),
        {
          accessToken: a.accessToken,
          refreshToken: a.refreshToken,
          expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
        },
        { displayName: 'CRM A' },
      )
    ).id;
    // A's backfill read and reconciled: until then the writes owed to A (the report's creates)
    // wait for A's reconcile, not for B.
    await waitForReconciled(s, crmA, { people: 3, name: 'CRM A' });
    // The second portal: two of A's people (one adds a company, one has another job title), two new.
    await s.emulator.hubspot.createPortal({ portalId: PORTAL_B, webhooks: true });
    const peopleOfB: Record<string, string>[] = [
      {
        email: 'ada.lovelace@analytical.example',
        firstname: 'Ada',
        lastname: 'Lovelace',
        company: 'Analytical Engines',
      },
      { email: 'alan@bletchley.example', firstname: 'Alan', lastname: 'Turing', jobtitle: 'Mathematician' },
      { email: 'katherine@nasa.example', firstname: 'Katherine', lastname: 'Johnson' },
      { email: 'linus@kernel.example', firstname: 'Linus', lastname: 'Torvalds' },
    ];
    for (const properties of peopleOfB) await s.emulator.hubspot.createContact(PORTAL_B, properties);
  }, 180_000);

  it('connects a second portal in dry run, reads the report, enables it and sees the sync carry it out', async () => {
    const context = await newContext(browser(), system());
    const page = await context.newPage();
    try {
      await signInByLink(page, system(), ADMIN_EMAIL, '/admin/connections');
      admin = await context.storageState();
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();

      // Connect through consent, in dry run: HubSpot's account chooser, then back to the report.
      await page.getByRole('button', { name: 'Connect a system' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Connect a system' });
      await dialog.getByRole('radio', { name: 'HubSpot' }).check();
      await dialog.getByRole('checkbox', { name: 'Try in dry run first' }).check();
      await dialog.getByRole('button', { name: 'Continue to HubSpot' }).click();
      await page.waitForURL((url) => url.origin === system().urls.hubspot);
      await page.getByRole('link', { name: `Account ${PORTAL_B}` }).click();
      await page.waitForURL((url) => /^\/admin\/connections\/[0-9a-f-]{36}\/dry-run$/.test(url.pathname), {
        timeout: 30_000,
      });
      const crmB = /connections\/([0-9a-f-]{36})\//.exec(page.url())?.[1] ?? '';
      const made = await system().api<{ dryRun: boolean; externalAccountId: string }>(
        'GET',
        `/api/v1/connections/${crmB}`,
      );
      expect(made.body).toMatchObject({ dryRun: true, externalAccountId: String(PORTAL_B) });

      // The report, refreshed until B's backfill has been read in full.
      await page.getByRole('heading', { level: 1, name: /^Dry run: / }).waitFor();
      await page.getByText('Backfill finished').waitFor({ timeout: 60_000 });
      await expect.poll(() => page.getByTestId('dry-run-links').textContent()).toBe('2');
      await expect.poll(() => page.getByTestId('dry-run-creations').textContent()).toBe('2');
      const linked = page.getByRole('table', { name: 'Records that would be linked' });
      await expect.poll(() => linked.textContent()).toContain('Ada Lovelace');
      expect(await linked.textContent()).toContain('Alan Turing');
      await expectAccessible(page, 'the dry-run report');

      await tab(page, /^New records/).click();
      const created = page.getByRole('table', { name: 'Records that would be created' });
      await expect.poll(() => created.textContent()).toContain('Katherine Johnson');
      expect(await created.textContent()).toContain('Linus Torvalds');
      expect(new URL(page.url()).searchParams.get('tab')).toBe('creations');

      await tab(page, /^Field changes/).click();
      const ada = page
        .getByRole('table', { name: 'Fields that would change' })
        .getByRole('row', { name: /Ada Lovelace/ });
      await expect.poll(() => ada.first().textContent()).toContain('Analytical Engines');

      await tab(page, /^Conflicts/).click();
      const conflict = page
        .getByRole('table', { name: 'Conflicts it would raise' })
        .getByRole('row', { name: /Job title/ });
      await expect.poll(() => conflict.textContent()).toContain('Waits in the inbox');
      expect(await conflict.textContent()).toMatch(
        /Cryptanalyst vs Mathematician|Mathematician vs Cryptanalyst/,
      );

      await tab(page, /^Writes/).click();
      const toA = page.getByRole('region', { name: 'Writes to CRM A' });
      await expect.poll(() => toA.textContent()).toContain('2 creates');
      // Every system is live and reconciled: none is left out of the counts.
      expect(await page.getByRole('alert', { name: 'Systems not counted yet' }).count()).toBe(0);
      await expectAccessible(page, 'the dry-run report, writes');

      // Nothing was written anywhere while in dry run.
      expect(await contact(PORTAL_A, 'katherine@nasa.example')).toBeUndefined();
      expect(await contact(PORTAL_B, 'grace@navy.example')).toBeUndefined();

      // On a phone too.
      const phone = await asAdmin(PHONE);
      try {
        await phone.page.goto(`/admin/connections/${crmB}/dry-run?tab=writes`);
        await phone.page.getByRole('region', { name: 'Writes to CRM A' }).waitFor();
        await expectAccessible(phone.page, 'the dry-run report on a phone');
      } finally {
        await phone.context.close();
      }

      // Enable, after a confirm stating the writes per system.
      await page.getByRole('button', { name: 'Enable…' }).click();
      const confirm = page.getByRole('dialog', { name: /^Enable / });
      const writes = confirm.getByRole('list', { name: 'Writes enabling makes' });
      await expect.poll(() => writes.textContent()).toContain('CRM A: 2 creates');
      expect(await writes.textContent()).toContain('(this connection)');
      await expectAccessible(page, 'the enable confirm');
      await confirm.getByRole('button', { name: 'Enable and sync' }).click();
      await page.waitForURL((url) => url.pathname === '/admin/connections');
      expect(
        (await system().api<{ dryRun: boolean }>('GET', `/api/v1/connections/${crmB}`)).body.dryRun,
      ).toBe(false);

      // The sync carries out what the report said: B's new people reach A, A's Grace reaches B,
      // Ada's company from B reaches A.
      await waitFor(
        async () => [
          await contact(PORTAL_A, 'katherine@nasa.example'),
          await contact(PORTAL_A, 'linus@kernel.example'),
          await contact(PORTAL_B, 'grace@navy.example'),
          (await contact(PORTAL_A, 'ada.lovelace@analytical.example'))?.properties.company,
        ],
        {
          until: ([k, l, g, company]) =>
            k !== undefined && l !== undefined && g !== undefined && company === 'Analytical Engines',
          timeoutMs: 60_000,
          describe: 'the enabled dry run synced into both portals',
        },
      );

      // Its report is gone with the dry run: the page says so and leads back.
      await page.goto(`/admin/connections/${crmB}/dry-run`);
      await page.getByText('This connection is not in dry run').waitFor();
      await page.getByRole('link', { name: 'Back to Connections' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('maps a field to a custom property, marks a refused row, reports a change made meanwhile and restores a revision', async () => {
    // Custom contact properties, as a portal admin makes them in HubSpot.
    for (const name of ['lead_score', 'lead_rating']) {
      const res = await fetch(`${system().urls.hubspot}/crm/v3/properties/contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, label: name, type: 'string', fieldType: 'text', groupName: 'sales' }),
      });
      expect(res.status).toBe(201);
    }
    const { context, page } = await asAdmin();
    const pick = async (label: string, search: string, option: RegExp, scope = page.locator('body')) => {
      const input = scope.getByRole('combobox', { name: label, exact: true });
      await input.click();
      await input.fill(search);
      await page.getByRole('option', { name: option }).click();
    };
    const save = page.getByRole('button', { name: 'Save mappings' });
    try {
      await page.goto(`/admin/connections/${crmA}/mappings`);
      await page.getByRole('heading', { level: 1, name: 'Field mappings: CRM A' }).waitFor();
      await page.getByRole('combobox', { name: 'Property for Job title' }).waitFor();
      await expectAccessible(page, 'the mappings page');

      // A custom field on a custom property (the portal's own list, searched).
      const add = page.getByRole('region', { name: 'Add a custom field' });
      await add.getByLabel('Field name').fill('leadScore');
      await pick('Property', 'lead_sc', /^lead_score · string/, add);
      await add.getByRole('button', { name: 'Add field' }).click();
      await page.getByRole('combobox', { name: 'Property for leadScore' }).waitFor();
      await save.click();
      await page.getByText('Mappings saved as version 1.').waitFor();
      expect(await mappings()).toMatchObject({
        version: 1,
        mappings: [{ entityType: 'person', field: 'leadScore', property: 'lead_score' }],
      });

      // Two fields on one property: refused, both rows marked, nothing stored.
      await pick('Property for Job title', 'lead_score', /^lead_score · string/);
      await save.click();
      await page.getByRole('alert').filter({ hasText: 'These mappings were not saved' }).waitFor();
      await expect
        .poll(() =>
          page.getByRole('combobox', { name: 'Property for Job title' }).getAttribute('aria-invalid'),
        )
        .toBe('true');
      expect(
        await page.getByRole('combobox', { name: 'Property for leadScore' }).getAttribute('aria-invalid'),
      ).toBe('true');
      expect(await page.locator('[data-field="person.jobTitle"]').textContent()).toContain(
        'a property carries one field',
      );
      await expectAccessible(page, 'the mappings page with a refused row');
      expect((await mappings()).version).toBe(1);
      await page.getByRole('button', { name: 'Reset Job title to its default property' }).click();
      expect(await save.isDisabled()).toBe(true);

      // A second version from the page: leadScore moves to the other custom property.
      await pick('Property for leadScore', 'lead_ra', /^lead_rating · string/);
      await save.click();
      await page.getByText('Mappings saved as version 2.').waitFor();

      // Someone else saves meanwhile: the page's next save is a 412 with a reload offer.
      const other = await system().api(
        'PUT',
        `/api/v1/connections/${crmA}/mappings`,
        { mappings: [{ entityType: 'person', field: 'leadScore', property: 'lead_score' }] },
        { headers: { 'if-match': '"2"' } },
      );
      expect(other.status).toBe(200);
      await page.getByRole('button', { name: 'Remove custom field leadScore' }).click();
      await save.click();
      await page.getByRole('alert').filter({ hasText: 'Someone else changed these mappings' }).waitFor();
      expect((await mappings()).version).toBe(3);
      await page.getByRole('button', { name: 'Reload their version' }).click();
      await page.getByText(/^Version 3,/).waitFor();
      expect(await page.getByRole('combobox', { name: 'Property for leadScore' }).inputValue()).toMatch(
        /^lead_score/,
      );

      // Restore version 2 from the revisions.
      await page.getByRole('button', { name: 'Restore version 2' }).click();
      const restore = page.getByRole('dialog', { name: 'Restore version 2?' });
      await expect.poll(() => restore.textContent()).toContain('person.leadScore → lead_rating');
      await restore.getByRole('button', { name: 'Restore' }).click();
      await page.getByText('Mappings saved as version 4.').waitFor();
      expect(await mappings()).toMatchObject({
        version: 4,
        mappings: [{ entityType: 'person', field: 'leadScore', property: 'lead_rating' }],
      });
      await expectAccessible(page, 'the mappings page after a restore');

      // On a phone: a card per field, each with its property.
      const phone = await asAdmin(PHONE);
      try {
        await phone.page.goto(`/admin/connections/${crmA}/mappings`);
        await phone.page.getByRole('list', { name: 'Fields and their properties' }).waitFor();
        expect(
          await phone.page.getByRole('combobox', { name: 'Property for leadScore' }).inputValue(),
        ).toMatch(/^lead_rating/);
        await expectAccessible(phone.page, 'the mappings page on a phone');
      } finally {
        await phone.context.close();
      }
    } finally {
      await context.close();
    }
  });
  it('discards a dry run after a confirm: disconnected, nothing written, the report says so', async () => {
    const s = system();
    const c = await s.emulator.hubspot.createPortal({ portalId: PORTAL_C });
    await s.emulator.hubspot.createContact(PORTAL_C, {
      email: 'margaret@apollo.example',
      firstname: 'Margaret',
      lastname: 'Hamilton',
    });
    const crmC = (
      await s.connect(
        'hubspot',
        String(PORTAL_C),
        { accessToken: c.accessToken, refreshToken: c.refreshToken },
        { displayName: 'CRM C', dryRun: true },
      )
    ).id;
    const { context, page } = await asAdmin();
    try {
      await page.goto(`/admin/connections/${crmC}/dry-run?tab=creations`);
      await page.getByRole('heading', { level: 1, name: 'Dry run: CRM C' }).waitFor();
      await page.getByText('Backfill finished').waitFor({ timeout: 60_000 });
      const created = page.getByRole('table', { name: 'Records that would be created' });
      await expect.poll(() => created.textContent()).toContain('Margaret Hamilton');

      await page.getByRole('button', { name: 'Discard…' }).click();
      const confirm = page.getByRole('dialog', { name: 'Discard the dry run of CRM C?' });
      await expect.poll(() => confirm.textContent()).toContain('everything it read is erased');
      await expectAccessible(page, 'the discard confirm');
      await confirm.getByRole('button', { name: 'Discard and disconnect' }).click();
      await page.waitForURL((url) => url.pathname === '/admin/connections');

      const gone = await s.api<{ status: string }>('GET', `/api/v1/connections/${crmC}`);
      expect(gone.body.status).toBe('disconnected');
      const people = await s.api<{ data: { displayName: string | null }[] }>(
        'GET',
        '/api/v1/people?limit=50',
      );
      expect(people.body.data.map((p) => p.displayName)).not.toContain('Margaret Hamilton');
      expect(await contact(PORTAL_A, 'margaret@apollo.example')).toBeUndefined();

      await page.goto(`/admin/connections/${crmC}/dry-run`);
      await page.getByText('This connection was disconnected').waitFor();
      await expectAccessible(page, 'the report of a discarded dry run');
    } finally {
      await context.close();
    }
  });
  it("a Google calendar's mappings page is read-only and says why", async () => {
    const s = system();
    const google = await s.emulator.google.createUser('grace@navy.example');
    const calendar = await s.connect(
      'google-calendar',
      'grace@navy.example',
      {
        accessToken: google.accessToken,
        refreshToken: google.refreshToken,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
      { displayName: 'Grace calendar' },
    );
    const { context, page } = await asAdmin(PHONE);
    try {
      await page.goto(`/admin/connections/${calendar.id}/mappings`);
      await page.getByRole('heading', { level: 1, name: 'Field mappings: Grace calendar' }).waitFor();
      await page.getByText('Nothing to map here').waitFor();
      expect(await page.getByRole('button', { name: 'Save mappings' }).count()).toBe(0);
      expect(await page.getByRole('main').getByRole('combobox').count()).toBe(0);
      await expectAccessible(page, 'the mappings page of a Google connection');
    } finally {
      await context.close();
    }
  });
});
