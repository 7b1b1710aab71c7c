import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, expectAccessible, newContext, PHONE, signInByLink, useBrowser } from './support/browser';
import type { HubspotRecord } from './support/emulator-client';
import { grantCredentials } from './support/emulator-client';
import { useSystem, waitFor } from './support/system';

// The salesperson's app in Chromium against the whole system on the emulators: two HubSpot
// portals (CRM A and CRM B) with webhooks to the API, a salesperson (Dana) and the workspace's
// admin signing in as themselves. Every outcome is read back where it lands: the page, the
// emulators' CRMs, the API.

const PORTAL_A = 3301;
const PORTAL_B = 3302;
const SALES = { email: 'dana.okafor@e2e.test', name: 'Dana Okafor' };
const ADMIN_EMAIL = 'admin@e2e.test';

interface PersonBody {
  id: string;
  version: number;
  displayName: string | null;
  fields: Record<string, unknown>;
  mergedInto: string | null;
}
interface Page_<T> {
  data: T[];
}

describe('the web app in Chromium', () => {
  const system = useSystem({ label: 'web_app', workers: 1 });
  const browser = useBrowser();

  const contact = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await system().emulator.hubspot.objects(portal, 'contacts')).find(
      (c) => c.properties.email?.toLowerCase() === email.toLowerCase(),
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
  /** Both CRMs hold this value of the property on the contact with this address. */
  const bothHold = (email: string, property: string, value: string, describe: string) =>
    waitFor(
      async () => [
        (await contact(PORTAL_A, email))?.properties[property],
        (await contact(PORTAL_B, email))?.properties[property],
      ],
      { until: ([a, b]) => a === value && b === value, timeoutMs: 30_000, describe },
    );

  // Dana signs in once by a mailed link (the first journey); the others open the app with her
  // cookies, as she would come back to it (links are limited per address and hour).
  let dana: Awaited<ReturnType<BrowserContext['storageState']>> | undefined;
  const asDana = async (viewport = DESKTOP) => {
    if (!dana) throw new Error('Dana did not sign in (the first journey failed)');
    const context = await newContext(browser(), system(), viewport, dana);
    return { context, page: await context.newPage() };
  };

  const field = (page: Page, label: string) => page.getByRole('group', { name: label, exact: true });

  /** Edits a field on the open record page as a person would: Edit, type, Save. */
  const editField = async (page: Page, label: string, value: string) => {
    const row = field(page, label);
    await row.getByRole('button', { name: `Edit ${label}` }).click();
    const input = row.getByRole('textbox', { name: label });
    await input.fill(value);
    await row.getByRole('button', { name: 'Save' }).click();
  };

  const openRecord = async (page: Page, id: string) => {
    await page.goto(`/people/${id}`);
    await field(page, 'Email').waitFor();
  };

  beforeAll(async () => {
    const s = system();
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A });
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B });
    // Ada in both CRMs under one address; Grace in A only; Alan twice under two addresses at one
    // company (a possible duplicate, never merged silently); Hedy in both for the conflict.
    for (const portal of [PORTAL_A, PORTAL_B]) {
      await s.emulator.hubspot.createContact(portal, {
        email: 'ada.lovelace@analytical.example',
        firstname: 'Ada',
        lastname: 'Lovelace',
        jobtitle: 'Analyst',
      });
      await s.emulator.hubspot.createContact(portal, {
        email: 'hedy.lamarr@wireless.example',
        firstname: 'Hedy',
        lastname: 'Lamarr',
        jobtitle: 'Inventor',
      });
    }
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'grace.hopper@navy.example',
      firstname: 'Grace',
      lastname: 'Hopper',
      jobtitle: 'Rear Admiral',
    });
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'alan.turing@bletchley.example',
      firstname: 'Alan',
      lastname: 'Turing',
    });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: 'aturing@bletchley.example',
      firstname: 'Alan',
      lastname: 'Turing',
      phone: '+44 20 7946 0100',
    });
    // Katherine twice too, under two addresses: a pair a salesperson marks as not the same.
    await s.emulator.hubspot.createContact(PORTAL_A, {
      email: 'katherine.johnson@nasa.example',
      firstname: 'Katherine',
      lastname: 'Johnson',
    });
    await s.emulator.hubspot.createContact(PORTAL_B, {
      email: 'kjohnson@langley.example',
      firstname: 'Katherine',
      lastname: 'Johnson',
    });
    // Job titles are settled by a person (the manual policy) from the start: on the log before
    // any change of the CRMs, so a concurrent edit always waits in the inbox.
    const manual = await s.api('PUT', '/api/v1/policies/person', {
      fields: { jobTitle: { kind: 'manual' } },
    });
    expect(manual.status, JSON.stringify(manual.body)).toBe(200);
    await s.connect('hubspot', String(PORTAL_A), grantCredentials(a), { displayName: 'CRM A' });
    await s.connect('hubspot', String(PORTAL_B), grantCredentials(b), { displayName: 'CRM B' });
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B);
    // Settled: Grace reached CRM B, and the Alans wait in review.
    await waitFor(() => contact(PORTAL_B, 'grace.hopper@navy.example'), {
      until: (c) => c !== undefined,
      timeoutMs: 60_000,
      describe: 'Grace to reach CRM B',
    });
    await waitFor(
      async () =>
        (await s.api<Page_<unknown>>('GET', '/api/v1/possible-duplicates?status=open')).body.data.length,
      { until: (n) => n > 0, timeoutMs: 30_000, describe: 'the two Alans in review' },
    );
    const invited = await s.api('POST', '/api/v1/members', {
      email: SALES.email,
      name: SALES.name,
      role: 'sales',
    });
    expect(invited.status).toBe(201);
  }, 180_000);

  it('a salesperson signs in by a mailed link, finds a person and sees where each value came from', async () => {
    const context = await newContext(browser(), system());
    const page = await context.newPage();
    try {
      await page.goto('/sign-in');
      await expectAccessible(page, 'the sign-in page');
      await signInByLink(page, system(), SALES.email, '/people');
      await page.getByRole('heading', { name: 'People' }).waitFor();
      dana = await context.storageState();
      await expectAccessible(page, 'the people list');

      // Search the list, open Ada.
      await page.getByRole('textbox', { name: 'Search' }).fill('lovelace');
      await page.waitForURL(/[?&]q=lovelace/);
      const row = page.getByRole('row', { name: /Ada Lovelace/ });
      await row.waitFor();
      await row.click();
      await field(page, 'Email').waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/people\/[0-9a-f-]{36}$/);
      await expect.poll(() => field(page, 'Job title').textContent()).toContain('Analyst');
      // Each value says where it came from: one of the CRMs.
      await expect.poll(() => field(page, 'Job title').textContent()).toMatch(/CRM A|CRM B|HubSpot/);
      // Both CRM records, each opening on its portal's page in the emulator.
      const sources = page.getByRole('region', { name: 'Sources' });
      const links = sources.getByRole('link', { name: /Open in HubSpot/ });
      await expect.poll(() => links.count()).toBe(2);
      const href = await links.first().getAttribute('href');
      expect(href).toMatch(
        new RegExp(`^${system().urls.hubspot}/contacts/(${PORTAL_A}|${PORTAL_B})/record/0-1/`),
      );
      expect((await fetch(href!)).status).toBe(200);
      await expectAccessible(page, 'the record page');
    } finally {
      await context.close();
    }
  });

  it('an edit on the page reaches both CRMs, and its source is the salesperson', async () => {
    const { context, page } = await asDana();
    try {
      const ada = await personByEmail('ada.lovelace@analytical.example');
      await openRecord(page, ada.id);
      await editField(page, 'Job title', 'Lead Analyst');
      await expect
        .poll(() => field(page, 'Job title').textContent(), { timeout: 15_000 })
        .toContain('Lead Analyst');
      await expect
        .poll(() => field(page, 'Job title').textContent(), { timeout: 15_000 })
        .toContain(SALES.name);
      await bothHold(
        'ada.lovelace@analytical.example',
        'jobtitle',
        'Lead Analyst',
        'both CRMs hold the edit',
      );
    } finally {
      await context.close();
    }
  });

  it('an edit made in CRM A appears on the open page without a reload', async () => {
    const { context, page } = await asDana();
    try {
      const grace = await personByEmail('grace.hopper@navy.example');
      await openRecord(page, grace.id);
      const navigations: string[] = [];
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) navigations.push(frame.url());
      });
      const inA = (await contact(PORTAL_A, 'grace.hopper@navy.example'))!;
      await system().emulator.hubspot.updateContact(PORTAL_A, inA.id, { jobtitle: 'Commodore' });
      await expect
        .poll(() => field(page, 'Job title').textContent(), { timeout: 15_000 })
        .toContain('Commodore');
      expect(navigations).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a stale save is a 412 shown beside the draft: their value and source, then apply mine', async () => {
    const { context, page } = await asDana();
    try {
      const ada = await personByEmail('ada.lovelace@analytical.example');
      // The record changes under the open page (another person, through the API) while this
      // browser hears no live events, so the page still holds the old version when Dana saves.
      await page.route('**/api/v1/stream**', (route) => route.abort());
      // Every PATCH the page sends, by its answer: one 412, then (Apply mine) one success.
      const saves: number[] = [];
      page.on('response', (response) => {
        if (response.request().method() === 'PATCH') saves.push(response.status());
      });
      await openRecord(page, ada.id);
      const row = field(page, 'Job title');
      await row.getByRole('button', { name: 'Edit Job title' }).click();
      await row.getByRole('textbox', { name: 'Job title' }).fill('Chief Analyst');
      const current = await personByEmail('ada.lovelace@analytical.example');
      const theirs = await system().api(
        'PATCH',
        `/api/v1/people/${ada.id}`,
        { fields: { jobTitle: 'Countess of Analysis' } },
        { headers: { 'if-match': String(current.version) } },
      );
      expect([200, 202], JSON.stringify(theirs.body)).toContain(theirs.status);
      await waitFor(() => personByEmail('ada.lovelace@analytical.example'), {
        until: (p) => p.fields.jobTitle === 'Countess of Analysis',
        describe: 'their edit merged',
      });
      await row.getByRole('button', { name: 'Save' }).click();
      // The row asks instead of retrying: their value with its source beside the draft.
      const panel = row;
      await expect.poll(() => saves).toEqual([412]);
      await panel.getByText('Job title was changed by someone else').waitFor();
      await expect
        .poll(() => panel.getByRole('group', { name: 'Their value' }).textContent())
        // Their value, and who set it: the API key that made the edit, by its name.
        .toMatch(/Countess of Analysis.*admin key/);
      await expect
        .poll(() => panel.getByRole('group', { name: 'Your draft' }).textContent())
        .toContain('Chief Analyst');
      await expectAccessible(page, 'the record page with a 412');
      await panel.getByRole('button', { name: 'Apply mine' }).click();
      await expect.poll(() => saves.length).toBe(2);
      expect([200, 202]).toContain(saves[1]);
      await bothHold(
        'ada.lovelace@analytical.example',
        'jobtitle',
        'Chief Analyst',
        'both CRMs hold Dana’s value',
      );
      expect((await personByEmail('ada.lovelace@analytical.example')).fields.jobTitle).toBe('Chief Analyst');
    } finally {
      await context.close();
    }
  });

  it('a conflict under the manual policy is settled in the inbox, and both CRMs hold the choice', async () => {
    const s = system();
    const hedy = await personByEmail('hedy.lamarr@wireless.example');
    const inA = (await contact(PORTAL_A, 'hedy.lamarr@wireless.example'))!;
    const inB = (await contact(PORTAL_B, 'hedy.lamarr@wireless.example'))!;
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A, null);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B, null);
    await s.emulator.hubspot.updateContact(PORTAL_A, inA.id, { jobtitle: 'Actress' });
    await s.emulator.hubspot.updateContact(PORTAL_B, inB.id, { jobtitle: 'Frequency-hopping pioneer' });
    await s.emulator.hubspot.setWebhookTarget(PORTAL_A);
    await s.emulator.hubspot.setWebhookTarget(PORTAL_B);

    const { context, page } = await asDana(PHONE);
    try {
      // On a phone: the inbox, the card, the choice.
      await page.goto('/conflicts');
      // The conflict is recorded once both edits are merged; the open inbox shows it (live).
      await waitFor(
        async () =>
          (
            await s.api<{ data: { field: string }[] }>(
              'GET',
              `/api/v1/conflicts?recordId=${hedy.id}&status=open`,
            )
          ).body.data.filter((c) => c.field === 'jobTitle').length,
        { until: (n) => n > 0, timeoutMs: 30_000, describe: 'an open jobTitle conflict on Hedy' },
      );
      const card = page.getByRole('article').filter({ hasText: 'Hedy Lamarr' });
      await expect.poll(() => card.count(), { timeout: 15_000 }).toBeGreaterThan(0);
      await expectAccessible(page, 'the conflicts inbox');
      await card
        .first()
        .getByRole('radio', { name: /Frequency-hopping pioneer/ })
        .check();
      await card
        .first()
        .getByRole('button', { name: /Keep|Resolve|Use/ })
        .click();
      await expect.poll(() => card.count(), { timeout: 15_000 }).toBe(0);
      await bothHold(
        'hedy.lamarr@wireless.example',
        'jobtitle',
        'Frequency-hopping pioneer',
        'both CRMs hold the choice',
      );
    } finally {
      await context.close();
    }
  });

  it('on a phone: search, open a record and edit a field', async () => {
    const { context, page } = await asDana(PHONE);
    try {
      await page.goto('/people');
      await page.getByRole('textbox', { name: 'Search' }).fill('grace');
      // The search is in the URL once typing pauses, and the list is drawn again then: a click
      // before that can land on a row as it is replaced.
      await page.waitForURL(/[?&]q=grace/);
      await page.getByRole('row', { name: /Grace Hopper/ }).click();
      await field(page, 'Email').waitFor();
      // The Activity section drawn too (its table is the widest thing on the page).
      await page.getByRole('table', { name: 'Engagement over 7, 30 and 90 days' }).waitFor();
      // Nothing wider than the phone: no sideways scrolling (evaluated in the page, as a string).
      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width).toBeLessThanOrEqual(PHONE.width);
      await editField(page, 'Phone', '+1 202 555 0199');
      await expect.poll(() => field(page, 'Phone').textContent(), { timeout: 15_000 }).toContain('555 0199');
      await expectAccessible(page, 'the record page on a phone');
    } finally {
      await context.close();
    }
  });

  it('merges two possible duplicates and undoes it', async () => {
    const { context, page } = await asDana();
    try {
      await page.goto('/duplicates');
      const pair = page.getByRole('link', { name: /Alan Turing/ }).first();
      await pair.click();
      await page.getByRole('table', { name: 'Fields of both records' }).waitFor();
      await expectAccessible(page, 'a possible duplicate');
      await page.getByRole('button', { name: /^Merge/ }).click();
      await page.waitForURL(/\/people\/[0-9a-f-]{36}/);
      const alans = async () =>
        (await system().api<Page_<PersonBody>>('GET', '/api/v1/people?q=turing')).body.data.filter(
          (p) => p.mergedInto === null,
        );
      const survivor = new URL(page.url()).pathname.split('/').pop()!;
      await waitFor(alans, {
        until: (list) => list.length === 1 && list[0]!.id === survivor,
        timeoutMs: 20_000,
        describe: 'one Alan, the survivor, after the merge',
      });
      await page.getByRole('button', { name: 'Undo' }).click();
      await waitFor(alans, {
        until: (list) => list.length === 2,
        timeoutMs: 20_000,
        describe: 'two Alans again after the undo',
      });
    } finally {
      await context.close();
    }
  });

  it('marks a possible duplicate as not the same: it leaves the queue and is never suggested again', async () => {
    const { context, page } = await asDana();
    type Pair = { id: string; status: string; a: { displayName: string | null } };
    const pairsOf = async (status: string) =>
      (
        await system().api<Page_<Pair>>('GET', `/api/v1/possible-duplicates?status=${status}&limit=50`)
      ).body.data.filter((p) => p.a.displayName === 'Katherine Johnson');
    try {
      await waitFor(() => pairsOf('open'), {
        until: (list) => list.length === 1,
        timeoutMs: 30_000,
        describe: 'the two Katherines in review',
      });
      await page.goto('/duplicates');
      await page
        .getByRole('link', { name: /Katherine Johnson/ })
        .first()
        .click();
      await page.getByRole('table', { name: 'Fields of both records' }).waitFor();
      await page.getByRole('button', { name: 'Not the same' }).click();
      await page.getByText('Marked as different').waitFor();
      await page.waitForURL((url) => url.pathname === '/duplicates');
      expect(await pairsOf('open')).toEqual([]);
      expect((await pairsOf('dismissed')).map((p) => p.status)).toEqual(['dismissed']);
      await expect.poll(() => page.getByRole('link', { name: /Katherine Johnson/ }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('an expired session sends the salesperson to sign in and back, with the draft edit kept', async () => {
    const { context, page } = await asDana();
    try {
      const grace = await personByEmail('grace.hopper@navy.example');
      await openRecord(page, grace.id);
      const row = field(page, 'Job title');
      await row.getByRole('button', { name: 'Edit Job title' }).click();
      await row.getByRole('textbox', { name: 'Job title' }).fill('Admiral of the Fleet');
      // The session is gone (this browser's cookie expired) when the draft is saved.
      await context.clearCookies();
      // The save finds the session gone, or a read in the background (the live stream, a
      // refetch) finds it first and the page leaves before the click lands: either way the
      // browser goes to sign in, so a click that finds no button is not a failure.
      const saved = row
        .getByRole('button', { name: 'Save' })
        .click({ timeout: 5_000 })
        .catch(() => undefined);
      await page.waitForURL((url) => url.pathname === '/sign-in');
      await saved;
      const returnTo = new URL(page.url()).searchParams.get('returnTo');
      expect(returnTo).toBe(`/people/${grace.id}`);
      await signInByLink(page, system(), SALES.email, returnTo!);
      await page.waitForURL((url) => url.pathname === `/people/${grace.id}`);
      // The draft is where it was, unsaved, ready to send again.
      await expect
        .poll(() => field(page, 'Job title').getByRole('textbox', { name: 'Job title' }).inputValue())
        .toBe('Admiral of the Fleet');
      expect((await personByEmail('grace.hopper@navy.example')).fields.jobTitle).not.toBe(
        'Admiral of the Fleet',
      );
      await field(page, 'Job title').getByRole('button', { name: 'Save' }).click();
      await bothHold(
        'grace.hopper@navy.example',
        'jobtitle',
        'Admiral of the Fleet',
        'both CRMs hold the saved draft',
      );
    } finally {
      await context.close();
    }
  });

  it('the fields stay where they are while the record’s changes are still being read', async () => {
    const { context, page } = await asDana();
    try {
      const grace = await personByEmail('grace.hopper@navy.example');
      // The record's changes come a second after the record, as on a slow line.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route('**/api/v1/people/*/history*', async (route) => {
        await held;
        await route.continue();
      });
      await openRecord(page, grace.id);
      const before = await field(page, 'Job title').boundingBox();
      release();
      await page.getByRole('slider', { name: /as of/i }).waitFor();
      const after = await field(page, 'Job title').boundingBox();
      expect(before).not.toBeNull();
      expect(after?.y).toBe(before?.y);
    } finally {
      await context.close();
    }
  });

  it('the as-of slider shows the record as it was', async () => {
    const { context, page } = await asDana();
    try {
      const ada = await personByEmail('ada.lovelace@analytical.example');
      await openRecord(page, ada.id);
      const slider = page.getByRole('slider', { name: /as of/i });
      await slider.focus();
      await page.keyboard.press('Home');
      await page.getByText(/Back to now/).waitFor();
      expect(new URL(page.url()).searchParams.get('asOf')).not.toBeNull();
      // The first version: Ada as the CRMs first had her.
      await expect.poll(() => field(page, 'Job title').textContent()).toContain('Analyst');
      await expect.poll(() => field(page, 'Job title').textContent()).not.toContain('Chief');
      await page.getByRole('button', { name: /Back to now/ }).click();
      await expect.poll(() => field(page, 'Job title').textContent()).toContain('Chief Analyst');
    } finally {
      await context.close();
    }
  });

  it('the admin signs in with Google through the emulator’s consent page', async () => {
    const context = await newContext(browser(), system(), DESKTOP);
    const page = await context.newPage();
    try {
      await page.goto('/sign-in?returnTo=%2Fdeals');
      await page.getByRole('link', { name: /Sign in with Google/ }).click();
      await page.waitForURL((url) => url.origin === system().urls.google);
      await page.getByLabel('Use another account').fill(ADMIN_EMAIL);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((url) => url.origin === system().urls.api && url.pathname === '/deals');
      const session = await page.request.get('/api/v1/auth/session');
      expect(session.status()).toBe(200);
      expect(await session.json()).toMatchObject({ role: 'admin', member: { email: ADMIN_EMAIL } });
    } finally {
      await context.close();
    }
  });

  it('a salesperson’s session cannot reach admin routes, writes need the CSRF token, and removal ends it at once', async () => {
    const { context, page } = await asDana();
    try {
      const request = page.request;
      expect((await request.get('/api/v1/dead-letters')).status()).toBe(403);
      expect((await request.get('/api/v1/people')).status()).toBe(200);
      const ada = await personByEmail('ada.lovelace@analytical.example');
      // A write with the cookie alone, or from another origin, is refused.
      const bare = await request.patch(`/api/v1/people/${ada.id}`, { data: { jobTitle: 'x' } });
      expect(bare.status()).toBe(403);
      const { csrfToken } = (await (await request.get('/api/v1/auth/session')).json()) as {
        csrfToken: string;
      };
      const foreign = await request.patch(`/api/v1/people/${ada.id}`, {
        data: { jobTitle: 'x' },
        headers: { 'x-csrf-token': csrfToken, origin: 'https://evil.example' },
      });
      expect(foreign.status()).toBe(403);

      const members = await system().api<{ data: { id: string; email: string }[] }>('GET', '/api/v1/members');
      const dana = members.body.data.find((m) => m.email === SALES.email)!;
      expect((await system().api('DELETE', `/api/v1/members/${dana.id}`)).status).toBe(204);
      expect((await request.get('/api/v1/people')).status()).toBe(401);
      await page.goto('/companies');
      await page.waitForURL(/\/sign-in\?returnTo=%2Fcompanies/);
    } finally {
      await context.close();
    }
  });
});
