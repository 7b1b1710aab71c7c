import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, newContext, PHONE, screenshot, signInByLink, useBrowser } from './support/browser';
import type { HubspotRecord } from './support/emulator-client';
import { grantCredentials } from './support/emulator-client';
import { useSystem, waitFor } from './support/system';

// The admin's policies and replays pages in Chromium against the whole system on the
// emulators: two HubSpot portals (CRM A and CRM B) with webhooks to the API, the workspace's
// admin and a salesperson (Dana) signed in as themselves. Outcomes are read where they land:
// the pages, the API, the emulators' CRMs.

const PORTAL_A = 3501;
const PORTAL_B = 3502;
const SALES = { email: 'dana.okafor@e2e.test', name: 'Dana Okafor' };
const ADMIN_EMAIL = 'admin@e2e.test';
const HEDY = 'hedy.lamarr@wireless.example';
const KATHERINE = 'katherine.johnson@nasa.example';
const PHONES: Record<number, string> = { [PORTAL_A]: '+1 757 555 0100', [PORTAL_B]: '+1 757 555 0199' };
/** How long the sync workers may keep using the policies they read before a save (they reread every 5 s). */
const POLICY_REREAD_MS = 6_000;

interface PersonBody {
  id: string;
  fields: Record<string, unknown>;
}
interface Page_<T> {
  data: T[];
}

describe('the admin’s policies and replays pages in Chromium', () => {
  const system = useSystem({
    label: 'web_admin_config',
    workers: 1,
  });
  const browser = useBrowser();

  const contact = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await system().emulator.hubspot.objects(portal, 'contacts')).find(
      (c) => c.properties.email?.toLowerCase() === email,
    );
  const personByEmail = async (email: string): Promise<PersonBody> => {
    const res = await system().api<Page_<PersonBody>>(
      'GET',
      `/api/v1/people?email=${encodeURIComponent(email)}`,
    );
    const found = res.body.data[0];
    if (!found) throw new Error(`no person ${email} in the API`);
    return found;
  };
  const bothPhones = async (email: string) => [
    (await contact(PORTAL_A, email))?.properties.phone,
    (await contact(PORTAL_B, email))?.properties.phone,
  ];

  let admin: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;
  const asAdmin = async (viewport?: { width: number; height: number }) => {
    if (!admin) throw new Error('the admin did not sign in (the first journey failed)');
    const context = await newContext(browser(), system(), viewport, admin);
    return { context, page: await context.newPage() };
  };

  /** A field's policy select on the policies page, and the option of a strategy in it. */
  const choosePolicy = async (page: Page, field: string, strategy: string) => {
    await page.getByRole('combobox', { name: field, exact: true }).click();
    await page.getByRole('option', { name: strategy, exact: true }).click();
  };
  const priorityList = (page: Page, field: string) =>
    page.getByRole('list', { name: `Priority order for ${field}` });
  /** The sources as listed, best first (each item reads "1. CRM A" and its two arrow buttons). */
  const orderOf = async (page: Page, field: string) =>
    (await priorityList(page, field).getByRole('listitem').allTextContents()).map((text) =>
      text
        .replace(/^\D*\d+\.\s*/, '')
        .replace(/[↑↓]/g, '')
        .trim(),
    );

  beforeAll(async () => {
    const s = system();
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A });
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B });
    // Hedy in both CRMs for the conflict; Katherine in both with a phone each (B's edit is the later).
    for (const portal of [PORTAL_A, PORTAL_B])
      await s.emulator.hubspot.createContact(portal, {
        email: HEDY,
        firstname: 'Hedy',
        lastname: 'Lamarr',
        jobtitle: 'Inventor',
      });
    for (const portal of [PORTAL_A, PORTAL_B])
      await s.emulator.hubspot.createContact(portal, {
        email: KATHERINE,
        firstname: 'Katherine',
        lastname: 'Johnson',
        phone: PHONES[portal] ?? null,
      });
    await s.connect('hubspot', String(PORTAL_A), grantCredentials(a), { displayName: 'CRM A' });
    await s.connect('hubspot', String(PORTAL_B), grantCredentials(b), { displayName: 'CRM B' });
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B);
    // Settled: Katherine's phone is one value, in both CRMs (the latest edit won).
    await waitFor(() => bothPhones(KATHERINE), {
      until: ([inA, inB]) => inA !== undefined && inA === inB,
      timeoutMs: 60_000,
      describe: 'one phone for Katherine in both CRMs',
    });
    const invited = await s.api('POST', '/api/v1/members', {
      email: SALES.email,
      name: SALES.name,
      role: 'sales',
    });
    expect(invited.status).toBe(201);
  }, 180_000);

  it('a job title set to manual on the policies page: a concurrent edit waits in the salesperson’s inbox', async () => {
    const s = system();
    const context = await newContext(browser(), s);
    const page = await context.newPage();
    const sales = await newContext(browser(), s);
    const dana = await sales.newPage();
    try {
      await signInByLink(page, s, ADMIN_EMAIL, '/admin/policies');
      admin = await context.storageState();
      // /admin/policies opens the people's policies.
      await page.waitForURL((url) => url.pathname === '/admin/policies/person');
      await page.getByRole('heading', { name: 'Merge policies', level: 1 }).waitFor();
      await page.getByRole('combobox', { name: 'Job title', exact: true }).waitFor();
      await expectAccessible(page, 'the policies page');

      await choosePolicy(page, 'Job title', 'A person decides');
      await page.getByText('Concurrent edits keep both values and wait in the conflicts inbox').waitFor();
      await page.getByRole('button', { name: 'Save policies' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved: version 1' }).waitFor();
      const savedAt = Date.now();
      await page.getByText('applies the policies to the past').waitFor();
      const set = await s.api<{ version: number; fields: Record<string, { kind: string }> }>(
        'GET',
        '/api/v1/policies/person',
      );
      expect([set.body.version, set.body.fields.jobTitle]).toEqual([1, { kind: 'manual' }]);
      // The revision is listed, by the admin.
      await page.getByText('Job title: A person decides').first().waitFor();

      // Dana signs in; the admin pages are not hers.
      await signInByLink(dana, s, SALES.email, '/admin/replays');
      await dana.getByRole('heading', { name: 'Admins only' }).waitFor();

      // The workers reread policies every 5 s: edits made before that could still be settled by lww.
      await waitFor(() => Date.now() - savedAt, {
        until: (elapsed) => elapsed >= POLICY_REREAD_MS,
        timeoutMs: POLICY_REREAD_MS + 5_000,
        describe: 'the workers to reread the policies',
      });
      // Two people edit Hedy's title in their own HubSpot before either hears of the other.
      const inA = (await contact(PORTAL_A, HEDY))!;
      const inB = (await contact(PORTAL_B, HEDY))!;
      await s.emulator.hubspot.setWebhookTarget(PORTAL_A, null);
      await s.emulator.hubspot.setWebhookTarget(PORTAL_B, null);
      await s.emulator.hubspot.updateContact(PORTAL_A, inA.id, { jobtitle: 'Actress' });
      await s.emulator.hubspot.updateContact(PORTAL_B, inB.id, { jobtitle: 'Frequency-hopping pioneer' });
      await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
      await s.emulator.hubspot.setWebhookTarget(PORTAL_B);

      const hedy = await personByEmail(HEDY);
      await waitFor(
        async () =>
          (
            await s.api<Page_<{ field: string }>>('GET', `/api/v1/conflicts?recordId=${hedy.id}&status=open`)
          ).body.data.filter((c) => c.field === 'jobTitle').length,
        { until: (n) => n > 0, timeoutMs: 30_000, describe: 'an open jobTitle conflict on Hedy' },
      );
      await dana.goto('/conflicts');
      const card = dana.getByRole('article').filter({ hasText: 'Hedy Lamarr' });
      await expect.poll(() => card.count(), { timeout: 15_000 }).toBeGreaterThan(0);
      await expect.poll(() => card.first().textContent()).toContain('Frequency-hopping pioneer');
      expect(await card.first().textContent()).toContain('Actress');
    } finally {
      await sales.close();
      await context.close();
    }
  });

  it('a priority order changed, a replay previewed and applied: the record takes the value, the other CRM gets it', async () => {
    const s = system();
    const before = await personByEmail(KATHERINE);
    // The portal whose phone lost under lww goes first: the replay must bring its phone back.
    const [loser, winner] =
      before.fields.phone === PHONES[PORTAL_A]
        ? (['CRM B', 'CRM A'] as const)
        : (['CRM A', 'CRM B'] as const);
    const wanted = loser === 'CRM A' ? PHONES[PORTAL_A] : PHONES[PORTAL_B];
    expect(before.fields.phone).not.toBe(wanted);
    const USER = 'People editing in Syncline';

    const { context, page } = await asAdmin();
    try {
      await page.goto('/admin/policies/person');
      await page.getByRole('combobox', { name: 'Phone', exact: true }).waitFor();
      await choosePolicy(page, 'Phone', 'Source priority');
      await expect.poll(() => orderOf(page, 'Phone')).toEqual(['CRM A', 'CRM B', USER]);

      // One real drag: people onto the first place.
      const list = priorityList(page, 'Phone');
      await list
        .getByRole('listitem')
        .filter({ hasText: USER })
        .dragTo(list.getByRole('listitem').filter({ hasText: 'CRM A' }));
      await expect.poll(() => orderOf(page, 'Phone')).toEqual([USER, 'CRM A', 'CRM B']);
      // Then the buttons, as from a keyboard: people back to last, the losing CRM first.
      const moveDown = page.getByRole('button', { name: `Move ${USER} down` });
      await moveDown.focus();
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      await expect.poll(() => orderOf(page, 'Phone')).toEqual(['CRM A', 'CRM B', USER]);
      await expect.poll(() => moveDown.isDisabled()).toBe(true);
      if (loser === 'CRM B') await page.getByRole('button', { name: 'Move CRM B up' }).click();
      await expect.poll(() => orderOf(page, 'Phone')).toEqual([loser, winner, USER]);
      await expectAccessible(page, 'the policies page with a priority order');
      await priorityList(page, 'Phone').scrollIntoViewIfNeeded();
      await screenshot(page, 'admin-policies');

      await page.getByRole('button', { name: 'Save policies' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved: version 2' }).waitFor();
      const saved = await s.api<{ fields: Record<string, { kind: string; order?: string[] }> }>(
        'GET',
        '/api/v1/policies/person',
      );
      expect(saved.body.fields.phone?.kind).toBe('priority');
      expect(saved.body.fields.phone?.order?.at(-1)).toBe('user');
      expect(saved.body.fields.jobTitle).toEqual({ kind: 'manual' });

      // Preview: the report lists the phone it would change.
      await page.getByRole('button', { name: 'Preview a replay' }).click();
      await page.waitForURL((url) => /^\/admin\/replays\/[0-9a-f-]{36}$/.test(url.pathname));
      const previewId = new URL(page.url()).pathname.split('/').at(-1)!;
      await page.getByRole('heading', { name: 'Replay preview', level: 1 }).waitFor();
      const changes = page.getByRole('table', { name: 'Field changes' });
      await changes.waitFor({ timeout: 60_000 });
      const row = changes
        .getByRole('row')
        .filter({ hasText: 'Katherine Johnson' })
        .filter({ hasText: 'phone' });
      await row.waitFor();
      expect(await row.textContent()).toContain(wanted);
      expect(await row.textContent()).toContain(String(before.fields.phone));
      expect((await personByEmail(KATHERINE)).fields.phone).toBe(before.fields.phone);
      await expectAccessible(page, 'a finished preview');
      await screenshot(page, 'admin-replay-preview');

      // Apply, after a confirm that says what it will change and write.
      await page.getByRole('button', { name: 'Apply…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Apply this replay?' });
      await dialog.waitFor();
      expect(await dialog.textContent()).toMatch(/Change field values on \d+ records?\./);
      expect(await dialog.textContent()).toMatch(/Write \d+ changes? to the connected systems\./);
      await dialog.getByRole('button', { name: 'Apply', exact: true }).click();
      await page.waitForURL(
        (url) => /^\/admin\/replays\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(previewId),
      );
      await page.getByRole('heading', { name: 'Replay applied', level: 1 }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Applied' }).waitFor({ timeout: 60_000 });

      await waitFor(async () => (await personByEmail(KATHERINE)).fields.phone, {
        until: (phone) => phone === wanted,
        timeoutMs: 30_000,
        describe: `Katherine's phone to be ${loser}'s again`,
      });
      await waitFor(() => bothPhones(KATHERINE), {
        until: ([inA, inB]) => inA === wanted && inB === wanted,
        timeoutMs: 30_000,
        describe: `${winner} to hold ${loser}'s phone`,
      });

      // Both replays in the history, requested by the admin.
      await page.getByRole('link', { name: '← All replays' }).click();
      await page.getByRole('heading', { name: 'Replays', level: 1 }).waitFor();
      const rows = page.getByRole('row').filter({ hasText: 'From the beginning' });
      await expect.poll(() => rows.count()).toBe(2);
      expect(await rows.first().textContent()).toContain('Apply');
      await expectAccessible(page, 'the replays page');
      await screenshot(page, 'admin-replays');
    } finally {
      await context.close();
    }
  });

  it('on a phone: a save on a stale version offers theirs; the pages read and pass axe', async () => {
    const s = system();
    const { context, page } = await asAdmin(PHONE);
    try {
      await page.goto('/admin/policies/person');
      await priorityList(page, 'Phone').waitFor();
      await expectAccessible(page, 'the policies page on a phone');
      await priorityList(page, 'Phone').scrollIntoViewIfNeeded();
      await screenshot(page, 'admin-policies-phone');
      // Nothing wider than the screen.
      const overflow = await page.evaluate(() => {
        const w = globalThis as unknown as {
          innerWidth: number;
          document: { documentElement: { scrollWidth: number } };
        };
        return w.document.documentElement.scrollWidth - w.innerWidth;
      });
      expect(overflow).toBeLessThanOrEqual(1);

      // Someone saves the set (as it stands) while this page holds a draft on the older version.
      await choosePolicy(page, 'Email', 'A person decides');
      await page.getByText('1 field changed, not saved').waitFor();
      const current = await s.api<{ version: number; fields: Record<string, { kind: string }> }>(
        'GET',
        '/api/v1/policies/person',
      );
      const kept = Object.fromEntries(
        Object.entries(current.body.fields).filter(([, p]) => p.kind !== 'lww'),
      );
      const theirs = await s.api('PUT', '/api/v1/policies/person', { fields: kept });
      expect(theirs.status).toBe(200);
      await page.getByRole('button', { name: 'Save policies' }).click();
      const stale = page.getByRole('alert').filter({ hasText: 'Someone else changed these policies' });
      await stale.waitFor();
      await expectAccessible(page, 'a stale save');
      await stale.getByRole('button', { name: 'Reload their version' }).click();
      await page.getByText(`Version ${current.body.version + 1},`).waitFor();
      await page.getByText('No unsaved changes').waitFor();
      expect(await page.getByRole('combobox', { name: 'Email', exact: true }).inputValue()).toBe(
        'Latest edit wins',
      );
      const after = await s.api<{ fields: Record<string, { kind: string }> }>(
        'GET',
        '/api/v1/policies/person',
      );
      expect(after.body.fields.email).toEqual({ kind: 'lww' });

      // An older revision restored into the form: reviewed, not saved until Save.
      await page.getByRole('button', { name: 'Restore version 1' }).click();
      await expect
        .poll(() => page.getByRole('combobox', { name: 'Phone', exact: true }).inputValue())
        .toBe('Latest edit wins');
      await page.getByText('1 field changed, not saved').waitFor();
      await page.getByRole('button', { name: 'Discard changes' }).click();
      await priorityList(page, 'Phone').waitFor();
      expect((await s.api<{ version: number }>('GET', '/api/v1/policies/person')).body.version).toBe(
        current.body.version + 1,
      );

      await page.goto('/admin/replays');
      await page.getByRole('row').filter({ hasText: 'From the beginning' }).first().waitFor();
      // From an event time: the time is asked for before anything starts.
      await page.getByRole('radio', { name: 'Records with changes since an event time' }).check();
      await page.getByRole('button', { name: 'Event time' }).waitFor();
      await page.getByRole('button', { name: 'Preview a replay' }).click();
      await page.getByText('Pick the time to start from.').waitFor();
      expect(new URL(page.url()).pathname).toBe('/admin/replays');
      await expectAccessible(page, 'the replays page on a phone');
    } finally {
      await context.close();
    }
  });
});
