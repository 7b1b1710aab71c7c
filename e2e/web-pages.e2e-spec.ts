import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { type DemoWorld, seedDemoWorld } from '../scripts/demo-world';
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

// Every page of the salesperson's app over the demo's world (two CRMs, a calendar, a mailbox
// and a task list, with planted duplicates and conflicts), settled: each page shows what the
// world holds, and axe finds no serious or critical violation on any of them, at desktop and
// phone width. With SYNCLINE_SCREENSHOTS=1 it writes the README's screenshots.

const SALES = { email: 'dana.okafor@brightwave.io', name: 'Dana Okafor' };
const ADMIN = { email: 'morgan.reyes@brightwave.io', name: 'Morgan Reyes' };

interface Listed {
  id: string;
  displayName: string | null;
}

describe('the app’s pages over the demo world', () => {
  const system = useSystem({ label: 'web_pages', workers: 1 });
  const browser = useBrowser();
  let world: DemoWorld;
  let state: Awaited<ReturnType<BrowserContext['storageState']>>;
  let adminState: Awaited<ReturnType<BrowserContext['storageState']>>;
  /** CRM C, connected in dry run once the rest settled; and a finished replay preview. */
  let dryRunId: string;
  let crmAId: string;
  let replayId: string;
  const rows = (page: Page) => page.getByRole('row');

  /** A person met in meetings and mails: the record page with a timeline. */
  const busiestPerson = async (): Promise<string> => {
    const [row] = await system().query<{ id: string }>(
      `SELECT e.id::text FROM entity e JOIN entity_association a ON a.party_id = e.id
        WHERE e.entity_type = 'person' AND e.merged_into IS NULL
          AND EXISTS (SELECT 1 FROM source_link l JOIN connection c ON c.id = l.connection_id
                       WHERE l.entity_id = e.id AND c.provider = 'hubspot')
        GROUP BY e.id ORDER BY count(*) DESC, e.id LIMIT 1`,
    );
    if (!row) throw new Error('no person with activities');
    return row.id;
  };

  /**
   * The person's Activity section says when they were last contacted. Insights appear once every
   * connection of the world has put its first watermark on the log, and no stream event announces
   * that: reload until they do. On failure, the API's answer says why.
   */
  const expectLastContacted = async (page: Page, id: string) => {
    const activity = page.getByRole('region', { name: 'Activity', exact: true });
    const lastContacted = activity
      .locator('dt', { hasText: 'Last contacted' })
      .locator('xpath=following-sibling::dd[1]');
    let polls = 0;
    try {
      await expect
        .poll(
          async () => {
            if (polls++ > 0) await page.reload();
            await activity.getByRole('heading', { name: 'Activity', exact: true }).waitFor();
            await lastContacted.waitFor();
            return (await lastContacted.textContent())?.trim() ?? '';
          },
          { timeout: 60_000, interval: 3_000 },
        )
        .not.toBe('Never');
    } catch (error) {
      const insights = await system().api('GET', `/api/v1/people/${id}/insights`);
      throw new Error(
        `${(error as Error).message}\nGET insights answered ${insights.status}: ${JSON.stringify(insights.body)}`,
      );
    }
  };

  /** Every connection live and reconciled, nothing owed to any system, for three polls in a row. */
  const settled = async () => {
    let calm = 0;
    await waitFor(
      async () => {
        const [row] = await system().query<{ unsettled: number }>(
          `SELECT (SELECT count(*) FROM connection WHERE status <> 'live' OR reconciled_at IS NULL)::int
                + (SELECT count(*) FROM outbox WHERE status IN ('pending', 'sending'))::int AS unsettled`,
        );
        calm = row!.unsettled === 0 ? calm + 1 : 0;
        return calm;
      },
      { until: (n) => n >= 3, timeoutMs: 150_000, intervalMs: 1_000, describe: 'the demo world to settle' },
    );
  };

  beforeAll(async () => {
    const s = system();
    world = await seedDemoWorld(s.emulator.urls, {
      seed: 1,
      people: 40,
      app: s.hubspotApp,
      userEmail: SALES.email,
      // Made once the backfill has settled, under the manual policy: they wait in the inbox.
      conflicts: 'deferred',
      sparePortal: {},
    });
    const { a, b } = world.portals;
    const g = world.google;
    // And one pair a person must judge: the same name at one company under two addresses.
    await s.emulator.hubspot.createContact(a.portalId, {
      email: 'priya.natarajan@lumenworks.example',
      firstname: 'Priya',
      lastname: 'Natarajan',
      jobtitle: 'Head of Operations',
    });
    await s.emulator.hubspot.createContact(b.portalId, {
      email: 'p.natarajan@lumenworks.example',
      firstname: 'Priya',
      lastname: 'Natarajan',
      phone: '+1 415 555 0142',
    });
    // Job titles are settled by a person (the manual policy), on the log before any change of
    // the CRMs: the planted concurrent edits wait in the inbox.
    const manual = await s.api('PUT', '/api/v1/policies/person', {
      fields: { jobTitle: { kind: 'manual' } },
    });
    expect(manual.status, JSON.stringify(manual.body)).toBe(200);
    await s.connect('hubspot', a.externalAccountId, a.credentials, { displayName: 'CRM A' });
    await s.connect('hubspot', b.externalAccountId, b.credentials, { displayName: 'CRM B' });
    for (const provider of ['google-calendar', 'gmail', 'google-tasks'] as const)
      await s.connect(provider, g.externalAccountId, g.credentials, {
        displayName: { 'google-calendar': 'Calendar', gmail: 'Gmail', 'google-tasks': 'Tasks' }[provider],
      });
    await settled();
    await world.applyConflicts();
    await waitFor(
      async () => (await s.api<{ data: unknown[] }>('GET', '/api/v1/conflicts?status=open')).body.data.length,
      { until: (n) => n > 0, timeoutMs: 30_000, describe: 'the planted job-title conflicts in the inbox' },
    );
    await settled();
    expect((await s.api('POST', '/api/v1/members', { ...SALES, role: 'sales' })).status).toBe(201);
    expect((await s.api('POST', '/api/v1/members', { ...ADMIN, role: 'admin' })).status).toBe(201);
    for (const [who, keep] of [
      [SALES, (st: typeof state) => (state = st)],
      [ADMIN, (st: typeof state) => (adminState = st)],
    ] as const) {
      const context = await newContext(browser(), s);
      const page = await context.newPage();
      await signInByLink(page, s, who.email, '/people');
      keep(await context.storageState());
      await context.close();
    }

    // For the admin's pages: CRM C in dry run with its report complete, and a replay preview.
    const connections = await s.api<{ data: { id: string; displayName: string | null }[] }>(
      'GET',
      '/api/v1/connections',
    );
    crmAId = connections.body.data.find((c) => c.displayName === 'CRM A')!.id;
    const spare = world.spare!;
    dryRunId = (
      await s.connect('hubspot', spare.externalAccountId, spare.credentials, {
        displayName: 'CRM C',
        dryRun: true,
      })
    ).id;
    await waitFor(
      async () =>
        (await s.api<{ complete: boolean }>('GET', `/api/v1/connections/${dryRunId}/dry-run`)).body.complete,
      { until: (done) => done === true, timeoutMs: 120_000, describe: "CRM C's dry-run report to complete" },
    );
    const replay = await s.api<{ id: string }>('POST', '/api/v1/replays', {
      from: 'beginning',
      mode: 'preview',
    });
    expect(replay.status).toBe(202);
    replayId = replay.body.id;
    await waitFor(
      async () => (await s.api<{ status: string }>('GET', `/api/v1/replays/${replayId}`)).body.status,
      {
        until: (status) => status !== 'pending' && status !== 'running',
        timeoutMs: 120_000,
        describe: 'the replay preview',
      },
    );
  }, 420_000);

  for (const viewport of [DESKTOP, PHONE]) {
    const phone = viewport === PHONE;
    const name = (page: string) => (phone ? `${page}-phone` : page);

    it(`lists people, companies and deals with their sources${phone ? ', on a phone' : ''}`, async () => {
      const context = await newContext(browser(), system(), viewport, state);
      const page = await context.newPage();
      try {
        for (const [path, heading] of [
          ['/people', 'People'],
          ['/companies', 'Companies'],
          ['/deals', 'Deals'],
        ] as const) {
          await page.goto(path);
          await page.getByRole('heading', { name: heading, exact: true }).waitFor();
          // A header row and at least one record, each naming the systems it comes from.
          await expect.poll(() => rows(page).count(), { timeout: 15_000 }).toBeGreaterThan(1);
          // On a phone the table keeps the name and drops the sources column.
          if (!phone) expect(await rows(page).nth(1).textContent()).toMatch(/HubSpot/);
          await expectAccessible(page, `${path}${phone ? ' on a phone' : ''}`);
          if (!phone || path === '/people') await screenshot(page, name(path.slice(1)));
        }
      } finally {
        await context.close();
      }
    });

    it(`shows a record with its timeline, history and identity${phone ? ', on a phone' : ''}`, async () => {
      const context = await newContext(browser(), system(), viewport, state);
      const page = await context.newPage();
      try {
        const id = await busiestPerson();
        await page.goto(`/people/${id}`);
        await page.getByRole('group', { name: 'Email', exact: true }).waitFor();
        await expectLastContacted(page, id);
        await page.getByRole('list', { name: 'Timeline' }).getByRole('listitem').first().waitFor();
        await expectAccessible(page, `the record's timeline${phone ? ' on a phone' : ''}`);
        await screenshot(page, name('record'));
        for (const tab of ['History', 'Identity']) {
          await page.getByRole('tab', { name: tab }).click();
          await expect.poll(() => new URL(page.url()).searchParams.get('tab')).toBe(tab.toLowerCase());
          await page.getByRole('tabpanel').waitFor();
          await expectAccessible(page, `the record's ${tab.toLowerCase()}${phone ? ' on a phone' : ''}`);
        }
      } finally {
        await context.close();
      }
    });

    it(`shows the conflicts and possible duplicates waiting for a person${phone ? ', on a phone' : ''}`, async () => {
      const context = await newContext(browser(), system(), viewport, state);
      const page = await context.newPage();
      try {
        const open = await system().api<{ data: { id: string }[] }>('GET', '/api/v1/conflicts?status=open');
        await page.goto('/conflicts');
        await page.getByRole('heading', { name: 'Conflicts', exact: true }).waitFor();
        if (open.body.data.length > 0) await page.getByRole('article').first().waitFor();
        else
          await page
            .getByText(/no open conflicts|nothing to settle|all settled/i)
            .first()
            .waitFor();
        await expectAccessible(page, `the conflicts inbox${phone ? ' on a phone' : ''}`);
        await screenshot(page, name('conflicts'));

        const pairs = await system().api<{ data: { id: string; a: Listed; b: Listed }[] }>(
          'GET',
          '/api/v1/possible-duplicates?status=open',
        );
        expect(pairs.body.data.length).toBeGreaterThan(0);
        await page.goto('/duplicates');
        await page
          .getByRole('heading', { name: /Possible duplicates|Duplicates/ })
          .first()
          .waitFor();
        await expectAccessible(page, `the possible duplicates${phone ? ' on a phone' : ''}`);
        await page.goto(`/duplicates/${pairs.body.data[0]!.id}`);
        await page.getByRole('table', { name: 'Fields of both records' }).waitFor();
        await expectAccessible(page, `a possible duplicate${phone ? ' on a phone' : ''}`);
        await screenshot(page, name('duplicate'));
      } finally {
        await context.close();
      }
    });
  }

  // Every admin page, with what it shows over the demo world; its heading names it.
  const adminPages = (): Array<{
    path: string;
    heading: RegExp;
    shot: string;
    shows: (page: Page) => Promise<void>;
  }> => [
    {
      path: '/admin/connections',
      heading: /^Connections$/,
      shot: 'admin-connections',
      shows: (page) => page.getByText('CRM A').first().waitFor(),
    },
    {
      path: `/admin/connections/${dryRunId}/dry-run`,
      heading: /dry.run/i,
      shot: 'admin-dry-run',
      shows: (page) => page.getByRole('tab').first().waitFor(),
    },
    {
      path: `/admin/connections/${crmAId}/mappings`,
      heading: /mappings/i,
      shot: 'admin-mappings',
      shows: (page) => page.getByRole('tab').first().waitFor(),
    },
    {
      path: '/admin/health',
      heading: /health/i,
      shot: 'admin-health',
      shows: (page) => page.getByText('CRM A').first().waitFor(),
    },
    {
      path: '/admin/policies/person',
      heading: /polic/i,
      shot: 'admin-policies',
      shows: (page) =>
        page
          .getByText(/job ?title/i)
          .first()
          .waitFor(),
    },
    {
      path: '/admin/replays',
      heading: /replays/i,
      shot: 'admin-replays',
      shows: (page) =>
        page
          .getByRole('link', { name: /preview|replay/i })
          .first()
          .waitFor(),
    },
    {
      path: `/admin/replays/${replayId}`,
      heading: /replay/i,
      shot: 'admin-replay',
      shows: (page) =>
        page
          .getByText(/field changes|changes/i)
          .first()
          .waitFor(),
    },
    {
      path: '/admin/dead-letters',
      heading: /dead letters/i,
      shot: 'admin-dead-letters',
      shows: async () => {},
    },
    {
      path: '/admin/audit-log',
      heading: /audit/i,
      shot: 'admin-audit-log',
      shows: (page) =>
        page
          .getByText(/member\.invited|invited/i)
          .first()
          .waitFor(),
    },
    {
      path: '/admin/api-keys',
      heading: /api keys/i,
      shot: 'admin-api-keys',
      shows: async () => {},
    },
    {
      path: '/admin/members',
      heading: /members/i,
      shot: 'admin-members',
      shows: (page) => page.getByText(SALES.email).first().waitFor(),
    },
  ];

  for (const viewport of [DESKTOP, PHONE]) {
    const phone = viewport === PHONE;
    it(`shows every admin page to an admin${phone ? ', on a phone' : ''}`, async () => {
      const context = await newContext(browser(), system(), viewport, adminState);
      const page = await context.newPage();
      try {
        for (const admin of adminPages()) {
          await page.goto(admin.path);
          await page.getByRole('heading', { level: 1, name: admin.heading }).waitFor();
          await admin.shows(page);
          await expect.poll(() => page.locator('[aria-busy="true"]').count(), { timeout: 15_000 }).toBe(0);
          await expectAccessible(page, `${admin.path}${phone ? ' on a phone' : ''}`);
          if (!phone || admin.shot === 'admin-connections')
            await screenshot(page, phone ? `${admin.shot}-phone` : admin.shot);
        }
      } finally {
        await context.close();
      }
    });
  }

  it('the sign-in page and a used link read well', async () => {
    const context = await newContext(browser(), system());
    const page = await context.newPage();
    try {
      await page.goto('/sign-in');
      await page.getByRole('button', { name: /email me a link/i }).waitFor();
      await expectAccessible(page, 'the sign-in page');
      await screenshot(page, 'sign-in');
      await page.goto('/sign-in/link#token=not-a-real-token-at-all-0000000000');
      await page.getByText(/used or has expired/i).waitFor();
      await expectAccessible(page, 'a used sign-in link');
    } finally {
      await context.close();
    }
  });
});
