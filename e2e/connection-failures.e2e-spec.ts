import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpSyncState } from './support/diagnostics';
import type {
  CalendarEvent,
  HubspotObjectType,
  HubspotRecord,
  LoggedRequest,
} from './support/emulator-client';
import { type ConnectionView, type SyncSystem, startSystem, waitFor } from './support/system';

// Connections failing the way real ones do: a revoked grant (the connection waits for new
// credentials while the others keep syncing, then catches up) and an invalidated cursor (a
// full resync that creates nothing twice). Two HubSpot portals (webhooks to our API) and one
// Google user's Calendar, later also the user's Gmail. Assertions read the emulators' state,
// request logs and the API; the database only for the source links per record.

const PORTAL_A = 3401;
const PORTAL_B = 3402;
const EMAIL = 'rita.rep@syncline-e2e.example';
const DANA = 'dana@northwind.example';

interface ConnectionWithState extends ConnectionView {
  state: { status: string; reason: string | null; lastErrorCode: string | null };
}

const instant = (value: string | null | undefined): number | undefined => {
  if (value === null || value === undefined || value === '') return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isNaN(n) ? undefined : n;
};
const iso = (value: string | null | undefined) => {
  const n = instant(value);
  return n === undefined ? value : new Date(n).toISOString();
};

describe('connections that fail: revoked grants and invalidated cursors', () => {
  let s: SyncSystem;
  let calendarConnection: ConnectionView;
  let pipelineReview: CalendarEvent;

  const objects = (portal: number, type: HubspotObjectType) => s.emulator.hubspot.objects(portal, type);
  const contactOf = async (portal: number, email: string): Promise<HubspotRecord | undefined> =>
    (await objects(portal, 'contacts')).find((c) => c.properties.email === email);
  const meetingTitled = async (portal: number, title: string): Promise<HubspotRecord | undefined> =>
    (await objects(portal, 'meetings')).find((m) => m.properties.hs_meeting_title === title);
  const liveEvents = async (): Promise<CalendarEvent[]> =>
    (await s.emulator.google.calendar.list(EMAIL)).filter((e) => e.status !== 'cancelled');
  const connection = async (id: string) =>
    (await s.api<ConnectionWithState>('GET', `/api/v1/connections/${id}`)).body;
  const googleCredentials = (grant: { accessToken: string; refreshToken: string }) => ({
    accessToken: grant.accessToken,
    refreshToken: grant.refreshToken,
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  });

  const dumpState = async () => {
    await dumpSyncState(s, 'connection failures');
    const state: Record<string, unknown> = {
      calendar: await s.emulator.google.calendar.list(EMAIL),
      gmail: await s.emulator.google.gmail.list(EMAIL),
    };
    for (const portal of [PORTAL_A, PORTAL_B])
      for (const type of ['contacts', 'meetings', 'emails'] as const)
        state[`${portal} ${type}`] = await objects(portal, type);
    console.log('emulator state', JSON.stringify(state, null, 1));
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'conn_failures', workers: 1, pullIntervalMs: 1_000 });
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A, webhooks: true });
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B, webhooks: true });
    const google = await s.emulator.google.createUser(EMAIL);
    await s.emulator.hubspot.createContact(PORTAL_A, { email: DANA, firstname: 'Dana', lastname: 'Scully' });
    pipelineReview = await s.emulator.google.calendar.create(EMAIL, {
      summary: 'Pipeline review',
      start: { dateTime: '2030-04-01T09:00:00.000Z' },
      end: { dateTime: '2030-04-01T10:00:00.000Z' },
    });
    const hubspotCredentials = (grant: { accessToken: string; refreshToken: string }) => ({
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
    });
    await s.connect('hubspot', String(PORTAL_A), hubspotCredentials(a), { displayName: 'CRM A' });
    await s.connect('hubspot', String(PORTAL_B), hubspotCredentials(b), { displayName: 'CRM B' });
    calendarConnection = await s.connect('google-calendar', EMAIL, googleCredentials(google), {
      displayName: 'Calendar',
    });
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('8. a revoked connection waits for new credentials while the others sync; then it catches up, nothing lost', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    // Baseline: Dana in both CRMs, the Calendar meeting in both CRMs.
    await waitFor(
      async () => ({
        dana: !!(await contactOf(PORTAL_B, DANA)),
        a: !!(await meetingTitled(PORTAL_A, 'Pipeline review')),
        b: !!(await meetingTitled(PORTAL_B, 'Pipeline review')),
      }),
      {
        until: (v) => v.dana && v.a && v.b,
        timeoutMs: 45_000,
        describe: 'Dana in CRM B and the Calendar meeting in both CRMs',
      },
    );

    // The Google grant is revoked; expired access tokens force a refresh, which is refused.
    await s.emulator.fault({ service: 'google', kind: 'revoke-token', account: EMAIL, count: 1 });
    await s.emulator.google.expireAccessTokens(EMAIL);
    await s.emulator.google.calendar.move(
      EMAIL,
      pipelineReview.id,
      '2030-04-01T14:00:00.000Z',
      '2030-04-01T15:00:00.000Z',
    );
    const danaA = (await contactOf(PORTAL_A, DANA))!;
    await s.emulator.hubspot.updateContact(PORTAL_A, danaA.id, { jobtitle: 'VP Sales' });
    const meetingA = (await meetingTitled(PORTAL_A, 'Pipeline review'))!;
    await s.emulator.hubspot.updateMeeting(PORTAL_A, meetingA.id, { hs_meeting_location: 'Zoom' });

    const revoked = await waitFor(() => connection(calendarConnection.id), {
      until: (c) => c.state?.status === 'needs_reauth',
      timeoutMs: 30_000,
      describe: 'the Calendar connection to need re-authorisation',
    });
    expect(revoked.state.reason).toEqual(expect.any(String));
    expect(revoked.state.reason!.length).toBeGreaterThan(0);

    // The other connections keep syncing: both edits made in CRM A reach CRM B.
    await waitFor(
      async () => ({
        jobtitle: (await contactOf(PORTAL_B, DANA))?.properties.jobtitle,
        location: (await meetingTitled(PORTAL_B, 'Pipeline review'))?.properties.hs_meeting_location,
      }),
      {
        until: (v) => v.jobtitle === 'VP Sales' && v.location === 'Zoom',
        timeoutMs: 30_000,
        describe: "CRM A's edits (job title, meeting location) in CRM B",
      },
    );
    // Still revoked, and Calendar's move is not known anywhere yet.
    expect((await connection(calendarConnection.id)).state.status).toBe('needs_reauth');
    expect(iso((await meetingTitled(PORTAL_A, 'Pipeline review'))?.properties.hs_meeting_start_time)).toBe(
      '2030-04-01T09:00:00.000Z',
    );

    // New credentials (a fresh grant from the same user) through the API.
    const fresh = await s.emulator.google.createUser(EMAIL);
    const put = await s.api<ConnectionWithState>(
      'PUT',
      `/api/v1/connections/${calendarConnection.id}/credentials`,
      { credentials: googleCredentials(fresh) },
    );
    expect(put.status).toBe(200);
    expect(put.body.state.status).not.toBe('needs_reauth');

    // It catches up both ways: the move made while revoked reaches both CRMs, and the
    // location set in CRM A meanwhile reaches Calendar.
    const expected = {
      start: '2030-04-01T14:00:00.000Z',
      end: '2030-04-01T15:00:00.000Z',
      location: 'Zoom',
    };
    await waitFor(
      async () => {
        const event = (await liveEvents()).find((e) => e.id === pipelineReview.id);
        const view = async (portal: number) => {
          const m = await meetingTitled(portal, 'Pipeline review');
          return {
            start: iso(m?.properties.hs_meeting_start_time),
            end: iso(m?.properties.hs_meeting_end_time),
            location: m?.properties.hs_meeting_location,
          };
        };
        return {
          calendar: {
            start: iso(event?.start?.dateTime),
            end: iso(event?.end?.dateTime),
            location: event?.location,
          },
          a: await view(PORTAL_A),
          b: await view(PORTAL_B),
        };
      },
      {
        until: (v) =>
          JSON.stringify([v.calendar, v.a, v.b]) === JSON.stringify([expected, expected, expected]),
        timeoutMs: 45_000,
        describe: 'Calendar and both CRMs to hold the move and the location',
      },
    );
    expect((await connection(calendarConnection.id)).state.status).toBe('live');

    // Nothing twice.
    expect((await liveEvents()).map((e) => e.summary)).toEqual(['Pipeline review']);
    for (const portal of [PORTAL_A, PORTAL_B]) {
      expect((await objects(portal, 'meetings')).map((m) => m.properties.hs_meeting_title)).toEqual([
        'Pipeline review',
      ]);
      expect((await objects(portal, 'contacts')).map((c) => c.properties.email)).toEqual([DANA]);
    }
  });

  it('9. invalidated Calendar and Gmail cursors: a full resync, and no record twice anywhere', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    // Gmail joins with a grant of its own; one mail from Dana is logged in both CRMs.
    const grant = await s.emulator.google.createUser(EMAIL);
    await s.connect('gmail', EMAIL, googleCredentials(grant), { displayName: 'Gmail' });
    await s.emulator.google.gmail.insert(EMAIL, {
      from: `Dana Scully <${DANA}>`,
      to: [EMAIL],
      subject: 'Proposal follow-up',
      text: 'Any news on the proposal?',
      messageId: '<proposal-follow-up@northwind.example>',
    });
    const emailSubjects = async (portal: number) =>
      (await objects(portal, 'emails')).map((e) => e.properties.hs_email_subject).sort();
    await waitFor(async () => [await emailSubjects(PORTAL_A), await emailSubjects(PORTAL_B)], {
      until: ([a, b]) =>
        a?.includes('Proposal follow-up') === true && b?.includes('Proposal follow-up') === true,
      timeoutMs: 45_000,
      describe: "Dana's mail logged in both CRMs",
    });

    const requestsBefore = (await s.emulator.requests({ service: 'google', account: EMAIL })).length;
    // Every sync token and history id the user holds dies at the next incremental call.
    await s.emulator.fault({ service: 'google', kind: 'invalidate-cursors', account: EMAIL, count: 1 });
    await s.emulator.google.calendar.create(EMAIL, {
      summary: 'Board prep',
      start: { dateTime: '2030-04-02T09:00:00.000Z' },
      end: { dateTime: '2030-04-02T10:00:00.000Z' },
    });
    await s.emulator.google.gmail.insert(EMAIL, {
      from: `Dana Scully <${DANA}>`,
      to: [EMAIL],
      subject: 'Contract signed',
      text: 'Signed copy attached.',
      messageId: '<contract-signed@northwind.example>',
    });

    await waitFor(
      async () => ({
        a: {
          meeting: !!(await meetingTitled(PORTAL_A, 'Board prep')),
          mail: (await emailSubjects(PORTAL_A)).includes('Contract signed'),
        },
        b: {
          meeting: !!(await meetingTitled(PORTAL_B, 'Board prep')),
          mail: (await emailSubjects(PORTAL_B)).includes('Contract signed'),
        },
      }),
      {
        until: (v) => v.a.meeting && v.a.mail && v.b.meeting && v.b.mail,
        timeoutMs: 45_000,
        describe: 'the new meeting and the new mail in both CRMs',
      },
    );

    // Both cursors were refused and both were rebuilt by a full listing.
    const since = (await s.emulator.requests({ service: 'google', account: EMAIL })).slice(requestsBefore);
    const path = (r: LoggedRequest) => r.path.split('?')[0] ?? '';
    const calendarList = since.filter((r) => r.method === 'GET' && path(r).endsWith('/events'));
    const refusedCalendar = calendarList.findIndex((r) => r.status === 410 && r.path.includes('syncToken='));
    expect(refusedCalendar).toBeGreaterThanOrEqual(0);
    expect(
      calendarList.slice(refusedCalendar).some((r) => r.status === 200 && !r.path.includes('syncToken=')),
    ).toBe(true);
    const refusedHistory = since.findIndex((r) => path(r).endsWith('/history') && r.status === 404);
    expect(refusedHistory).toBeGreaterThanOrEqual(0);
    expect(since.slice(refusedHistory).some((r) => r.status === 200 && path(r).endsWith('/messages'))).toBe(
      true,
    );

    // Settle, then count: each record once in each system.
    await waitFor(async () => JSON.stringify(await s.emulator.writeCounts()), {
      until: (() => {
        let last = '';
        let stableSince = Date.now();
        return (now: string) => {
          if (now !== last) {
            last = now;
            stableSince = Date.now();
          }
          return Date.now() - stableSince >= 3_000;
        };
      })(),
      timeoutMs: 30_000,
      intervalMs: 500,
      describe: 'writes to the emulators to stop for 3 s',
    });
    expect((await liveEvents()).map((e) => e.summary).sort()).toEqual(['Board prep', 'Pipeline review']);
    for (const portal of [PORTAL_A, PORTAL_B]) {
      expect((await objects(portal, 'meetings')).map((m) => m.properties.hs_meeting_title).sort()).toEqual([
        'Board prep',
        'Pipeline review',
      ]);
      expect(await emailSubjects(portal)).toEqual(['Contract signed', 'Proposal follow-up']);
      expect((await objects(portal, 'contacts')).map((c) => c.properties.email)).toEqual([DANA]);
    }
    expect((await s.emulator.google.gmail.list(EMAIL)).filter((m) => !m.deleted)).toHaveLength(2);

    // Source links per record: every meeting and mail is one entity, linked once per connection.
    const links = await s.query<{ entity_type: string; title: string | null; providers: string[] }>(
      `SELECT e.entity_type, COALESCE(e.fields->>'title', e.fields->>'subject') AS title,
              array_agg(c.provider::text || ':' || c.external_account_id ORDER BY c.provider::text, c.external_account_id) AS providers
         FROM entity e JOIN source_link l ON l.entity_id = e.id JOIN connection c ON c.id = l.connection_id
        WHERE e.merged_into IS NULL AND e.entity_type IN ('meeting', 'email_activity')
        GROUP BY e.id, e.entity_type ORDER BY 1, 2`,
    );
    const calendar = `google-calendar:${EMAIL}`;
    const gmail = `gmail:${EMAIL}`;
    const crms = [`hubspot:${PORTAL_A}`, `hubspot:${PORTAL_B}`];
    expect(links).toEqual([
      { entity_type: 'email_activity', title: 'Contract signed', providers: [gmail, ...crms] },
      { entity_type: 'email_activity', title: 'Proposal follow-up', providers: [gmail, ...crms] },
      { entity_type: 'meeting', title: 'Board prep', providers: [calendar, ...crms] },
      { entity_type: 'meeting', title: 'Pipeline review', providers: [calendar, ...crms] },
    ]);
  });
});
