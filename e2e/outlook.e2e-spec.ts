import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpSyncState } from './support/diagnostics';
import type {
  HubspotObjectType,
  HubspotRecord,
  MicrosoftControl,
  OutlookEvent,
} from './support/emulator-client';
import { type ConnectionView, type SyncSystem, startSystem, waitFor } from './support/system';

// Microsoft 365 beside two HubSpot portals, through the real API and workers processes: one
// salesperson's Outlook calendar, Outlook mail and To Do, connected with a grant of the
// Microsoft emulator's identity platform. Graph's notifications reach our API (the validation
// handshake included) and only ever cause a pull. Assertions read the emulators' state and
// request logs and the API; the database only to explain a failure.

const PORTAL_A = 3501;
const PORTAL_B = 3502;
const UPN = 'rita.rep@contoso-e2e.example';
const BEA = 'bea.buyer@acme-e2e.example';
const SCOPES = [
  'openid',
  'email',
  'profile',
  'offline_access',
  'User.Read',
  'Calendars.ReadWrite',
  'Mail.Read',
  'Tasks.ReadWrite',
];
const DAY = 86_400_000;

interface ConnectionWithState extends ConnectionView {
  state: { status: string; reason: string | null; lastErrorCode: string | null };
}

/** HubSpot datetimes may be ISO strings or epoch-ms strings: as ISO. */
const iso = (value: string | null | undefined): string | undefined => {
  if (value === null || value === undefined || value === '') return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isNaN(n) ? undefined : new Date(n).toISOString();
};
/** Graph's wall-clock UTC time (no offset) as ISO. */
const graphIso = (t: { dateTime: string } | undefined) =>
  t ? new Date(`${t.dateTime}Z`).toISOString() : undefined;
/** A day ahead at an hour, UTC, inside the calendar's window. */
const at = (days: number, hour: number) =>
  new Date(Math.floor(Date.now() / DAY) * DAY + days * DAY + hour * 3_600_000).toISOString();

describe('Microsoft 365: Outlook calendar, Outlook mail and To Do, two-way with two CRMs', () => {
  let s: SyncSystem;
  let ms: MicrosoftControl;
  let app: { clientId: string; clientSecret: string };
  const connections: Record<string, ConnectionView> = {};
  let introCall: OutlookEvent;

  const objects = (portal: number, type: HubspotObjectType) => s.emulator.hubspot.objects(portal, type);
  const titled = async (portal: number, type: 'meetings' | 'emails' | 'tasks', title: string) => {
    const field = { meetings: 'hs_meeting_title', emails: 'hs_email_subject', tasks: 'hs_task_subject' }[
      type
    ];
    return (await objects(portal, type)).filter((r) => r.properties[field] === title);
  };
  const liveEvents = async () => (await ms.calendar.list(UPN)).filter((e) => !e.isCancelled);
  const connection = async (id: string) =>
    (await s.api<ConnectionWithState>('GET', `/api/v1/connections/${id}`)).body;
  const credentials = async () => {
    const grant = await ms.grant(UPN, app.clientId, SCOPES);
    return {
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      expiresAt: new Date(Date.now() + grant.expiresIn * 1000).toISOString(),
    };
  };
  /** Every create of an event, message or task Graph answered, by path. */
  const creates = async () =>
    (await ms.requests(UPN)).filter(
      (r) => r.method === 'POST' && r.status === 201 && !r.path.includes('subscriptions'),
    );

  const dumpState = async () => {
    await dumpSyncState(s, 'outlook');
    const state: Record<string, unknown> = {
      calendar: await ms.calendar.list(UPN),
      mail: await ms.mail.list(UPN),
      todo: await ms.todo.list(UPN),
      subscriptions: await ms.subscriptions(),
    };
    for (const portal of [PORTAL_A, PORTAL_B])
      for (const type of ['contacts', 'meetings', 'emails', 'tasks'] as const)
        state[`${portal} ${type}`] = await objects(portal, type);
    console.log('emulator state', JSON.stringify(state, null, 1));
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'outlook', workers: 1, pullIntervalMs: 1_000 });
    if (!s.emulator.microsoft) throw new Error('the emulators started without Microsoft 365');
    ms = s.emulator.microsoft;
    app = await ms.oauthClient();
    const portals = await Promise.all(
      [PORTAL_A, PORTAL_B].map((portalId) => s.emulator.hubspot.createPortal({ portalId, webhooks: true })),
    );
    for (const portalId of [PORTAL_A, PORTAL_B])
      await s.emulator.hubspot.createContact(portalId, { email: BEA, firstname: 'Bea', lastname: 'Buyer' });
    for (const [i, portal] of portals.entries()) {
      const c = await s.connect(
        'hubspot',
        String([PORTAL_A, PORTAL_B][i]),
        {
          accessToken: portal.accessToken,
          refreshToken: portal.refreshToken,
          expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
        },
        { displayName: i === 0 ? 'CRM A' : 'CRM B' },
      );
      connections[i === 0 ? 'a' : 'b'] = c;
    }
    const user = await ms.createUser({ upn: UPN, displayName: 'Rita Rep' });
    const account = `${user.tenantId}:${user.id}`.toLowerCase();
    const granted = await credentials();
    for (const provider of ['microsoft-calendar', 'microsoft-mail', 'microsoft-todo'] as const)
      connections[provider] = await s.connect(provider, account, granted, { displayName: provider });
    await waitFor(
      async () => (await s.api<{ data: { status: string }[] }>('GET', '/api/v1/connections')).body.data,
      {
        until: (list) => list.length === 5 && list.every((c) => c.status === 'live'),
        timeoutMs: 45_000,
        describe: 'the five connections to be live',
      },
    );
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('1. an Outlook meeting with a CRM contact is a meeting in each portal holding her, and on her timeline', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    introCall = await ms.calendar.create(UPN, {
      subject: 'Intro call with Acme',
      start: { dateTime: at(7, 9).slice(0, 19), timeZone: 'UTC' },
      end: { dateTime: at(7, 9.5).slice(0, 19), timeZone: 'UTC' },
      attendees: [{ type: 'required', emailAddress: { name: 'Bea Buyer', address: BEA } }],
    });
    const [inA, inB] = await waitFor(
      async () => Promise.all([PORTAL_A, PORTAL_B].map((p) => titled(p, 'meetings', 'Intro call with Acme'))),
      {
        until: (both) => both.every((list) => list.length === 1),
        timeoutMs: 45_000,
        describe: 'a HubSpot meeting for the Outlook event in both portals',
      },
    );
    for (const meeting of [inA![0]!, inB![0]!]) {
      expect(iso(meeting.properties.hs_meeting_start_time)).toBe(at(7, 9));
      expect(iso(meeting.properties.hs_meeting_end_time)).toBe(at(7, 9.5));
    }
    const people = await s.api<{ data: { id: string }[] }>(
      'GET',
      `/api/v1/people?email=${encodeURIComponent(BEA)}`,
    );
    expect(people.body.data).toHaveLength(1);
    const timeline = await waitFor(
      async () =>
        (
          await s.api<{ data: { title?: string | null }[] }>(
            'GET',
            `/api/v1/people/${people.body.data[0]!.id}/timeline`,
          )
        ).body.data,
      {
        until: (items) => items.some((i) => i.title === 'Intro call with Acme'),
        timeoutMs: 30_000,
        describe: "the meeting on Bea's timeline",
      },
    );
    expect(timeline.filter((i) => i.title === 'Intro call with Acme')).toHaveLength(1);
  });

  it('2. a meeting edited in HubSpot changes in Outlook, and a HubSpot meeting is made in Outlook', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const [meeting] = await titled(PORTAL_A, 'meetings', 'Intro call with Acme');
    await s.emulator.hubspot.updateMeeting(PORTAL_A, meeting!.id, {
      hs_meeting_title: 'Intro call with Acme (agenda)',
    });
    await waitFor(async () => (await liveEvents()).find((e) => e.id === introCall.id), {
      until: (e) => e?.subject === 'Intro call with Acme (agenda)',
      timeoutMs: 45_000,
      describe: 'the Outlook event to take the title edited in CRM A',
    });
    await s.emulator.hubspot.createMeeting(PORTAL_B, {
      hs_meeting_title: 'Demo for Globex',
      hs_meeting_start_time: at(8, 15),
      hs_meeting_end_time: at(8, 16),
      hs_timestamp: at(8, 15),
    });
    const event = await waitFor(
      async () => (await liveEvents()).find((e) => e.subject === 'Demo for Globex'),
      {
        timeoutMs: 45_000,
        describe: 'an Outlook event for the meeting booked in CRM B',
      },
    );
    expect(graphIso(event!.start)).toBe(at(8, 15));
    expect(graphIso(event!.end)).toBe(at(8, 16));
  });

  it('3. a mail from her in Outlook is an email activity in both portals', async ({ onTestFailed }) => {
    onTestFailed(dumpState);
    await ms.mail.receive(UPN, {
      from: { name: 'Bea Buyer', address: BEA },
      to: { address: UPN },
      subject: 'Proposal follow-up',
      body: 'Any news on the proposal?',
      internetMessageId: '<proposal-follow-up@acme-e2e.example>',
    });
    await waitFor(
      async () => Promise.all([PORTAL_A, PORTAL_B].map((p) => titled(p, 'emails', 'Proposal follow-up'))),
      {
        until: (both) => both.every((list) => list.length === 1),
        timeoutMs: 45_000,
        describe: "Bea's mail logged in both CRMs",
      },
    );
  });

  it('4. a To Do task is a HubSpot task, and completing it in HubSpot completes it in To Do', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const task = await ms.todo.create(UPN, {
      title: 'Send proposal to Acme',
      dueDateTime: { dateTime: `${at(9, 0).slice(0, 10)}T00:00:00`, timeZone: 'UTC' },
    });
    const [hubspotTask] = await waitFor(async () => titled(PORTAL_A, 'tasks', 'Send proposal to Acme'), {
      until: (list) => list.length === 1,
      timeoutMs: 45_000,
      describe: 'the HubSpot task for the To Do task',
    });
    expect(hubspotTask!.properties.hs_task_status).not.toBe('COMPLETED');
    await s.emulator.hubspot.updateTask(PORTAL_A, hubspotTask!.id, { hs_task_status: 'COMPLETED' });
    await waitFor(async () => (await ms.todo.list(UPN)).find((t) => t.id === task.id), {
      until: (t) => t?.status === 'completed',
      timeoutMs: 45_000,
      describe: 'the To Do task to be completed',
    });
  });

  it('5. throttled at 5 %, an expired delta token, a removed subscription, consent revoked and restored: converged, nothing twice', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const calendarConnection = connections['microsoft-calendar']!;
    const subscriptionsOf = async () =>
      (await ms.subscriptions()).subscriptions.filter(
        (sub) => sub.userPrincipalName === UPN && sub.resource.includes('vents'),
      );
    const [removed] = await waitFor(subscriptionsOf, {
      until: (list) => list.length > 0,
      timeoutMs: 30_000,
      describe: "the calendar connection's Graph subscription",
    });
    const createsBefore = (await creates()).length;

    // Graph throttles the mailbox (one request in twenty, until the end of the scenario),
    // forgets every delta token and drops the subscription.
    await ms.fault({ kind: 'rate-limit', account: UPN, rate: 0.05 });
    await ms.fault({ kind: 'invalidate-cursors', account: UPN, count: 1 });
    await ms.lifecycle(removed!.id, 'subscriptionRemoved');
    await ms.calendar.create(UPN, {
      subject: 'Board prep',
      start: { dateTime: at(10, 9).slice(0, 19), timeZone: 'UTC' },
      end: { dateTime: at(10, 10).slice(0, 19), timeZone: 'UTC' },
      attendees: [{ type: 'required', emailAddress: { name: 'Bea Buyer', address: BEA } }],
    });
    await ms.mail.receive(UPN, {
      from: { name: 'Bea Buyer', address: BEA },
      to: { address: UPN },
      subject: 'Contract signed',
      body: 'Signed copy attached.',
      internetMessageId: '<contract-signed@acme-e2e.example>',
    });
    await waitFor(
      async () =>
        Promise.all(
          [PORTAL_A, PORTAL_B].flatMap((p) => [
            titled(p, 'meetings', 'Board prep'),
            titled(p, 'emails', 'Contract signed'),
          ]),
        ),
      {
        until: (lists) => lists.every((list) => list.length === 1),
        timeoutMs: 60_000,
        describe: 'the meeting and the mail made meanwhile in both CRMs',
      },
    );
    // The subscription Graph removed is made again.
    await waitFor(subscriptionsOf, {
      until: (list) => list.length > 0 && list.every((sub) => sub.id !== removed!.id),
      timeoutMs: 60_000,
      describe: 'a new calendar subscription in place of the removed one',
    });

    // The consent is revoked: the connections wait for new credentials, then catch up.
    await ms.failGrant(UPN, 'revoked', app.clientId);
    await ms.expireAccessTokens(UPN);
    await waitFor(() => connection(calendarConnection.id), {
      until: (c) => c.state.status === 'needs_reauth',
      timeoutMs: 45_000,
      describe: 'the calendar connection to need new credentials',
    });
    await ms.calendar.create(UPN, {
      subject: 'Pricing review',
      start: { dateTime: at(11, 9).slice(0, 19), timeZone: 'UTC' },
      end: { dateTime: at(11, 10).slice(0, 19), timeZone: 'UTC' },
      attendees: [{ type: 'required', emailAddress: { name: 'Bea Buyer', address: BEA } }],
    });
    const restored = await credentials();
    for (const provider of ['microsoft-calendar', 'microsoft-mail', 'microsoft-todo']) {
      const res = await s.api('PUT', `/api/v1/connections/${connections[provider]!.id}/credentials`, {
        credentials: restored,
      });
      expect(res.status).toBe(200);
    }
    await waitFor(
      async () => Promise.all([PORTAL_A, PORTAL_B].map((p) => titled(p, 'meetings', 'Pricing review'))),
      {
        until: (both) => both.every((list) => list.length === 1),
        timeoutMs: 60_000,
        describe: 'the meeting made while the consent was revoked, in both CRMs',
      },
    );
    expect((await connection(calendarConnection.id)).state.status).toBe('live');

    // Nothing twice, anywhere.
    const meetingTitles = [
      'Board prep',
      'Demo for Globex',
      'Intro call with Acme (agenda)',
      'Pricing review',
    ];
    expect((await liveEvents()).map((e) => e.subject).sort()).toEqual(meetingTitles);
    for (const portal of [PORTAL_A, PORTAL_B]) {
      const titles = (await objects(portal, 'meetings')).map(
        (m: HubspotRecord) => m.properties.hs_meeting_title,
      );
      expect(titles.sort()).toEqual(meetingTitles);
      const subjects = (await objects(portal, 'emails')).map((e) => e.properties.hs_email_subject);
      expect(subjects.sort()).toEqual(['Contract signed', 'Proposal follow-up']);
      expect((await objects(portal, 'contacts')).map((c) => c.properties.email)).toEqual([BEA]);
    }
    // Syncline made nothing in Outlook during the faults: every event it needed was there.
    expect(createsBefore).toBeGreaterThan(0);
    expect((await creates()).length).toBe(createsBefore);
    // And the faults were met: the throttle, and a delta token Graph no longer knew.
    await s.emulator.clearFaults();
    const answered = await ms.requests(UPN);
    expect(answered.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    expect(
      answered.filter((r) => r.path.includes('delta') && (r.status === 410 || r.status === 400)).length,
    ).toBeGreaterThan(0);
    expect(answered.filter((r) => r.status === 401).length).toBeGreaterThan(0);
  });
});
