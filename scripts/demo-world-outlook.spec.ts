import { afterEach, describe, expect, it, vi } from 'vitest';
import { planDemoWorld } from './demo-world';
import {
  addressOf,
  BRIGHTWAVE_TENANT_ID,
  DEMO_MICROSOFT_APP,
  OUTLOOK_GRANT_SCOPES,
  outlookExternalAccountId,
  planOutlookUser,
  seedOutlookUser,
} from './demo-world-outlook';

const DAY = 86_400_000;
const world = planDemoWorld({ seed: 3, people: 120 });
const plan = planOutlookUser(world);
const anchorMs = Date.parse(world.anchor);
const mails = plan.conversations.flat();
const personById = new Map(world.people.map((p) => [p.id, p]));
const peopleEmails = new Set(world.people.map((p) => p.email.toLowerCase()));

describe('planOutlookUser', () => {
  it('is the same for a seed and differs for another', () => {
    expect(planOutlookUser(planDemoWorld({ seed: 3, people: 120 }))).toEqual(plan);
    const other = planOutlookUser(planDemoWorld({ seed: 4, people: 120 }));
    expect(other.meetings.map((m) => m.subject)).not.toEqual(plan.meetings.map((m) => m.subject));
  });

  it('is Marco Rossi in Brightwave’s tenant unless told otherwise', () => {
    expect(plan).toMatchObject({
      upn: 'marco.rossi@brightwave.io',
      displayName: 'Marco Rossi',
      tenantId: BRIGHTWAVE_TENANT_ID,
      seed: 3,
      anchor: world.anchor,
    });
    const other = planOutlookUser(world, {
      upn: 'Ana.Lima@Brightwave.io',
      tenantId: 'ABCDEF01-0000-4000-8000-000000000001',
    });
    expect(other).toMatchObject({
      upn: 'ana.lima@brightwave.io',
      displayName: 'ana.lima',
      tenantId: 'abcdef01-0000-4000-8000-000000000001',
    });
  });

  it('has about people/10 meetings, people/8 mails and a handful of tasks, or as many as asked', () => {
    expect(plan.meetings).toHaveLength(12);
    expect(mails).toHaveLength(15);
    expect(plan.tasks).toHaveLength(4);
    const big = planOutlookUser(planDemoWorld({ seed: 1 }));
    expect([big.meetings.length, big.conversations.flat().length, big.tasks.length]).toEqual([30, 38, 8]);
    const asked = planOutlookUser(world, { meetings: 5, messages: 9, tasks: 6 });
    expect([asked.meetings.length, asked.conversations.flat().length, asked.tasks.length]).toEqual([5, 9, 6]);
  });

  it('shares exactly one of Dana’s Google meetings: same time, her attendees, Dana and Marco', () => {
    const shared = plan.meetings.filter((m) => m.googleMeetingKey);
    expect(shared).toHaveLength(1);
    const meeting = shared[0]!;
    expect(meeting.key).toBe(plan.shared.meetingKey);
    const dana = world.meetings.find((m) => m.key === meeting.googleMeetingKey)!;
    expect(dana.key).toBe(plan.shared.googleMeetingKey);
    expect(dana.alsoInHubspot).toBeUndefined();
    expect([meeting.start, meeting.minutes, meeting.subject, meeting.location]).toEqual([
      dana.start,
      dana.minutes,
      dana.summary,
      dana.location,
    ]);
    const emails = meeting.attendees.map((a) => a.email);
    expect(emails).toEqual(
      expect.arrayContaining([world.userEmail, plan.upn, ...dana.attendees.map((a) => a.email)]),
    );
    expect(emails).toHaveLength(dana.attendees.length + 2);
  });

  it('lays Marco’s own meetings on weekdays around the anchor, some past and some ahead, with CRM people', () => {
    const own = plan.meetings.filter((m) => !m.googleMeetingKey);
    expect(own.some((m) => m.start < anchorMs)).toBe(true);
    expect(own.some((m) => m.start > anchorMs)).toBe(true);
    for (const m of own) {
      expect(m.start).toBeGreaterThan(anchorMs - 24 * DAY);
      expect(m.start).toBeLessThan(anchorMs + 17 * DAY);
      expect([0, 6]).not.toContain(new Date(m.start).getUTCDay());
      expect(m.attendees.length).toBeGreaterThan(0);
      for (const a of m.attendees) expect(personById.get(a.personId!)?.email).toBe(a.email);
    }
    expect(plan.meetings.map((m) => m.start)).toEqual(
      [...plan.meetings.map((m) => m.start)].sort((x, y) => x - y),
    );
    expect(new Set(plan.meetings.map((m) => m.key)).size).toBe(plan.meetings.length);
  });

  it('has mail received and sent before the anchor, unique Message-IDs, and one conversation with replies', () => {
    const ids = mails.map((m) => m.internetMessageId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^<[^<>@\s]+@[^<>@\s]+>$/);
    for (const m of mails) expect(Date.parse(m.sentAt)).toBeLessThan(anchorMs);
    expect(mails.some((m) => m.folder === 'inbox')).toBe(true);
    expect(mails.some((m) => m.folder === 'sentitems')).toBe(true);
    const longest = plan.conversations.reduce((a, b) => (b.length > a.length ? b : a));
    expect(longest.length).toBeGreaterThanOrEqual(3);
    expect(new Set(longest.map((m) => m.conversationId)).size).toBe(1);
    expect(longest.slice(1).every((m) => m.subject.startsWith('RE: '))).toBe(true);
    expect(new Set(plan.conversations.map((c) => c[0]!.conversationId)).size).toBe(plan.conversations.length);
    for (const m of mails.filter((x) => !x.alsoInGmail)) {
      const counterpart = m.folder === 'inbox' ? m.from : m.to[0]!;
      const own = m.folder === 'inbox' ? m.to[0]! : m.from;
      expect(peopleEmails.has(addressOf(counterpart).toLowerCase())).toBe(true);
      expect(addressOf(own)).toBe(plan.upn);
    }
  });

  it('has the mail Dana also has in Gmail, under the same Message-ID, Marco on cc', () => {
    const shared = mails.filter((m) => m.alsoInGmail);
    expect(shared).toHaveLength(1);
    const mail = shared[0]!;
    expect(mail.key).toBe(plan.shared.mailKey);
    const dana = world.threads.flat().find((m) => m.messageId === mail.internetMessageId)!;
    expect(dana).toBeDefined();
    expect(plan.shared.internetMessageId).toBe(dana.messageId);
    expect([mail.from, mail.subject, mail.sentAt, mail.folder]).toEqual([
      dana.from,
      dana.subject,
      dana.date,
      'inbox',
    ]);
    expect(mail.cc.map(addressOf)).toContain(plan.upn);
  });

  it('has To Do tasks naming CRM people, some completed by the anchor, due around it', () => {
    expect(plan.tasks.some((t) => t.completedOn)).toBe(true);
    expect(plan.tasks.some((t) => !t.completedOn)).toBe(true);
    for (const t of plan.tasks) {
      const p = personById.get(t.personId)!;
      expect(t.title).toContain(`${p.firstName} ${p.lastName}`);
      const due = Date.parse(`${t.due}T00:00:00Z`);
      expect(due).toBeGreaterThanOrEqual(Math.floor(anchorMs / DAY) * DAY - 10 * DAY);
      expect(due).toBeLessThanOrEqual(anchorMs + 21 * DAY);
      if (t.completedOn) expect(Date.parse(`${t.completedOn}T00:00:00Z`)).toBeLessThan(anchorMs);
    }
  });
});

describe('outlookExternalAccountId', () => {
  it('is the tenant and the object id, lower case', () => {
    expect(outlookExternalAccountId('3F6A9C1E-AAAA-4000-8000-000000000000', 'B1C2-D3')).toBe(
      '3f6a9c1e-aaaa-4000-8000-000000000000:b1c2-d3',
    );
  });
});

// seedOutlookUser against a stand-in for the emulators' control routes (no sockets).
describe('seedOutlookUser', () => {
  const urls = { hubspot: 'http://hs.test', google: 'http://google.test', microsoft: 'https://ms.test' };
  type Call = { method: string; url: string; body: Record<string, unknown> | undefined };

  const fakeEmulators = (googleEvents: unknown[]) => {
    const calls: Call[] = [];
    let n = 0;
    const json = (body: unknown, status = 200) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET';
      const body = init.body ? (JSON.parse(String(init.body)) as Record<string, unknown>) : undefined;
      calls.push({ method, url, body });
      const path = new URL(url).pathname;
      n++;
      if (path.endsWith('/calendar/events') && url.startsWith(urls.google)) return json(googleEvents);
      if (path.endsWith('/gmail/messages'))
        return json([
          {
            id: 'gm-1',
            payload: { headers: [{ name: 'Message-ID', value: plan.shared.internetMessageId }] },
          },
        ]);
      if (url.startsWith(urls.google)) return json({});
      if (path === '/_emulator/microsoft/apps') return json(body, 201);
      if (path === '/_emulator/microsoft/users')
        return json({ id: 'A1B2C3D4-0000-4000-8000-00000000000F', tenantId: body!.tenantId }, 201);
      if (path.endsWith('/grants'))
        return json({ accessToken: 'at', refreshToken: 'rt', expiresIn: 3600, scope: '' }, 201);
      if (path.endsWith('/ui/calendar/events'))
        return json({ id: `ev-${n}`, iCalUId: (body!.iCalUId as string | undefined) ?? `GOID-${n}` }, 201);
      return json({ id: `item-${n}` }, 201);
    });
    return calls;
  };
  const googleCopy = (m: (typeof world.meetings)[number]) => ({
    id: `g-${m.key}`,
    iCalUID: `g-${m.key}@google.com`,
    status: 'confirmed',
    summary: m.summary,
    start: { dateTime: new Date(m.start).toISOString() },
    attendees: [{ email: world.userEmail, organizer: true }, ...m.attendees.map((a) => ({ email: a.email }))],
  });

  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('makes the user in its tenant, grants the scopes and writes the plan; the shared meeting carries Google’s UID', async () => {
    const calls = fakeEmulators(world.meetings.map(googleCopy));
    const user = await seedOutlookUser(urls, world, { redirectUris: ['http://localhost:3000/cb'] });
    const to = (method: string, suffix: string) =>
      calls.filter((c) => c.method === method && new URL(c.url).pathname.endsWith(suffix));

    expect(to('POST', '/_emulator/microsoft/apps')[0]!.body).toMatchObject({
      clientId: DEMO_MICROSOFT_APP.clientId,
      redirectUris: ['http://localhost:3000/cb'],
    });
    expect(to('POST', '/_emulator/microsoft/users')[0]!.body).toEqual({
      userPrincipalName: 'marco.rossi@brightwave.io',
      displayName: 'Marco Rossi',
      tenantId: BRIGHTWAVE_TENANT_ID,
    });
    expect(to('POST', '/grants')[0]!.body).toEqual({
      clientId: DEMO_MICROSOFT_APP.clientId,
      scopes: [...OUTLOOK_GRANT_SCOPES],
    });
    expect(to('POST', '/ui/calendar/events')).toHaveLength(plan.meetings.length);
    expect(to('POST', '/ui/mail/messages')).toHaveLength(mails.length);
    expect(to('POST', '/ui/todo/tasks')).toHaveLength(plan.tasks.length);
    expect(calls.filter((c) => c.method === 'PATCH' && c.url.includes('/ui/todo/tasks/'))).toHaveLength(
      plan.tasks.filter((t) => t.completedOn).length,
    );
    const withUid = to('POST', '/ui/calendar/events').filter((c) => c.body!.iCalUId);
    expect(withUid.map((c) => c.body!.iCalUId)).toEqual([`g-${plan.shared.googleMeetingKey}@google.com`]);

    // Marco joins the invitation in Dana's Google calendar.
    const invite = calls.find((c) => c.method === 'PATCH' && c.url.startsWith(urls.google))!;
    expect(invite.url).toContain(`/ui/calendar/events/g-${plan.shared.googleMeetingKey}`);
    expect((invite.body!.attendees as Array<{ email: string }>).map((a) => a.email)).toContain(plan.upn);

    expect(user).toMatchObject({
      upn: plan.upn,
      tenantId: BRIGHTWAVE_TENANT_ID,
      userId: 'A1B2C3D4-0000-4000-8000-00000000000F',
      externalAccountId: `${BRIGHTWAVE_TENANT_ID}:a1b2c3d4-0000-4000-8000-00000000000f`,
      credentials: { accessToken: 'at', refreshToken: 'rt' },
      clientId: DEMO_MICROSOFT_APP.clientId,
      clientSecret: DEMO_MICROSOFT_APP.clientSecret,
      counts: {
        events: plan.meetings.length,
        messages: mails.length,
        inbox: mails.filter((m) => m.folder === 'inbox').length,
        sent: mails.filter((m) => m.folder === 'sentitems').length,
        tasks: plan.tasks.length,
        completedTasks: plan.tasks.filter((t) => t.completedOn).length,
      },
      sharedMeeting: {
        key: plan.shared.meetingKey,
        googleEventId: `g-${plan.shared.googleMeetingKey}`,
        iCalUId: `g-${plan.shared.googleMeetingKey}@google.com`,
        sameICalUId: true,
      },
      sharedMessage: { internetMessageId: plan.shared.internetMessageId, gmailMessageId: 'gm-1' },
    });
    expect(Object.keys(user.eventIds)).toEqual(plan.meetings.map((m) => m.key));
    expect(Date.parse(user.credentials.expiresAt)).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it('uses the app it is given without registering one', async () => {
    const calls = fakeEmulators(world.meetings.map(googleCopy));
    const user = await seedOutlookUser(urls, world, { app: { clientId: 'api-app', clientSecret: 's3cret' } });
    expect(calls.some((c) => c.url.endsWith('/_emulator/microsoft/apps'))).toBe(false);
    expect(calls.find((c) => c.url.endsWith('/grants'))!.body!.clientId).toBe('api-app');
    expect([user.clientId, user.clientSecret]).toEqual(['api-app', 's3cret']);
  });

  it('refuses to seed before Dana’s Google calendar holds the shared meeting', async () => {
    const calls = fakeEmulators([]);
    await expect(seedOutlookUser(urls, world)).rejects.toThrow(/seedDemoWorld/);
    expect(calls.filter((c) => c.url.startsWith(urls.microsoft))).toHaveLength(0);
  });

  it('needs the Microsoft emulator’s URL', async () => {
    await expect(seedOutlookUser({ hubspot: urls.hubspot, google: urls.google }, world)).rejects.toThrow(
      /urls\.microsoft/,
    );
  });
});
