import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpSyncState } from './support/diagnostics';
import { grantCredentials, type HubspotRecord } from './support/emulator-client';
import { type SyncSystem, startSystem, waitFor } from './support/system';

// Activity insights written to both CRMs, through the real API and workers processes: two
// HubSpot portals, a Gmail mailbox and a Google calendar. The CRMs' properties are read from
// the emulators (values and property history), the record's results from the API; the
// database is read only to time the crash of scenario 3 and to explain a failure.

const PORTAL_A = 3501;
const PORTAL_B = 3502;
const ME = 'rhea.rep@syncline-e2e.example';
const ADA = 'ada@analytical-e2e.example';
/** The period of insight writes these workers run with (INSIGHT_WRITE_PERIOD_MS). */
const PERIOD_MS = 4_000;
const DAY = 86_400_000;

const SYNCLINE_PROPERTIES = [
  'syncline_last_contacted',
  'syncline_last_contacted_via',
  'syncline_next_meeting',
  'syncline_mails_in_30d',
  'syncline_mails_out_30d',
  'syncline_meetings_30d',
  'syncline_engagement_7d',
  'syncline_engagement_90d',
  'syncline_engagement_trend',
];

/** HubSpot datetimes may be ISO strings or epoch-ms strings: an instant, or undefined. */
const instant = (value: string | null | undefined): number | undefined => {
  if (value === null || value === undefined || value === '') return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isNaN(n) ? undefined : n;
};

interface Insights {
  lastContactedAt: string | null;
  lastContactedVia: string | null;
  nextMeetingAt: string | null;
  last30: { mailsIn: number; mailsOut: number; meetings: number };
}

// Each scenario waits for both CRMs (up to 90 s a wait) more than once.
describe('activity insights in both CRMs', { timeout: 240_000 }, () => {
  let s: SyncSystem;
  let tokens: Record<number, string>;
  let adaId: string;
  const adaIn = async (portal: number): Promise<HubspotRecord | undefined> =>
    (await s.emulator.hubspot.objects(portal, 'contacts')).find((c) => c.properties.email === ADA);
  const insights = async () => (await s.api<Insights>('GET', `/api/v1/people/${adaId}/insights`)).body;
  /** A data-plane read with the portal's own token, as any HubSpot client makes it. */
  const hubspotGet = async <T>(portal: number, path: string): Promise<T> => {
    const response = await fetch(`${s.emulator.urls.hubspot}${path}`, {
      headers: { authorization: `Bearer ${tokens[portal]}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  let sentSoFar = 0;
  /** Mails from Ada, spread over the last two days (before the watermarks' skew). */
  const mailsFromAda = async (count: number, subject: string) => {
    const now = Date.now();
    for (let i = 0; i < count; i++) {
      await s.emulator.google.gmail.insert(ME, {
        from: `Ada Lovelace <${ADA}>`,
        to: [ME],
        subject: `${subject} ${i}`,
        text: 'Numbers.',
        date: new Date(now - 10 * 60_000 - ((i * 97_003) % (2 * DAY))).toISOString(),
        messageId: `<${subject.replace(/\W/g, '-')}-${i}@analytical-e2e.example>`,
      });
    }
    sentSoFar += count;
  };
  const bothCrmsCount = (mailsIn: number) =>
    waitFor(async () => [await adaIn(PORTAL_A), await adaIn(PORTAL_B)], {
      until: (records) => records.every((r) => r?.properties.syncline_mails_in_30d === String(mailsIn)),
      timeoutMs: 90_000,
      describe: `both CRMs to count ${mailsIn} mails from Ada in 30 days`,
    });

  beforeAll(async () => {
    s = await startSystem({
      label: 'insights',
      workers: 1,
      pullIntervalMs: 1_000,
      env: { INSIGHT_WRITE_PERIOD_MS: String(PERIOD_MS) },
    });
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A, webhooks: true });
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B, webhooks: true });
    tokens = { [PORTAL_A]: a.accessToken, [PORTAL_B]: b.accessToken };
    const google = await s.emulator.google.createUser(ME);
    await s.emulator.hubspot.createContact(PORTAL_A, { email: ADA, firstname: 'Ada', lastname: 'Lovelace' });
    await s.connect('hubspot', String(PORTAL_A), grantCredentials(a), { displayName: 'CRM A' });
    await s.connect('hubspot', String(PORTAL_B), grantCredentials(b), { displayName: 'CRM B' });
    const googleCredentials = {
      accessToken: google.accessToken,
      refreshToken: google.refreshToken,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    };
    await s.connect('gmail', ME, googleCredentials, { displayName: 'Gmail' });
    await s.connect('google-calendar', ME, googleCredentials, { displayName: 'Calendar' });
    await waitFor(async () => adaIn(PORTAL_B), { timeoutMs: 60_000, describe: 'Ada copied to CRM B' });
    const people = await s.api<{ data: { id: string }[] }>(
      'GET',
      `/api/v1/people?email=${encodeURIComponent(ADA)}`,
    );
    adaId = people.body.data[0]!.id;
  }, 180_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('1. a mail and a meeting make last contacted and next meeting appear in both CRMs’ Syncline properties', async ({
    onTestFailed,
  }) => {
    onTestFailed(() => dumpSyncState(s, 'activity insights'));
    // Made on connect: each portal holds the properties before any record is owed them, in a
    // group of Syncline's, labelled as Syncline's.
    for (const portal of [PORTAL_A, PORTAL_B]) {
      const ours = await waitFor(
        async () =>
          (
            await hubspotGet<{ results: { name: string; label: string; groupName: string }[] }>(
              portal,
              '/crm/v3/properties/contacts',
            )
          ).results.filter((p) => SYNCLINE_PROPERTIES.includes(p.name)),
        {
          until: (list) => list.length === SYNCLINE_PROPERTIES.length,
          timeoutMs: 30_000,
          describe: `portal ${portal}'s properties`,
        },
      );
      expect(ours.every((p) => p.groupName === 'syncline' && /Syncline/.test(p.label))).toBe(true);
    }
    expect((await adaIn(PORTAL_A))?.properties.syncline_last_contacted).toBeUndefined();
    // A mail's date is whole seconds (its Date header).
    const mailAt = new Date(Math.floor((Date.now() - DAY) / 1000) * 1000).toISOString();
    await s.emulator.google.gmail.insert(ME, {
      from: `Ada Lovelace <${ADA}>`,
      to: [ME],
      subject: 'The engine',
      text: 'Shall we meet?',
      date: mailAt,
      messageId: '<the-engine@analytical-e2e.example>',
    });
    sentSoFar = 1;
    const meetingAt = new Date(Math.ceil((Date.now() + 3 * DAY) / 3_600_000) * 3_600_000).toISOString();
    await s.emulator.google.calendar.create(ME, {
      summary: 'Engine review',
      start: { dateTime: meetingAt },
      end: { dateTime: new Date(Date.parse(meetingAt) + 3_600_000).toISOString() },
      attendees: [{ email: ADA, displayName: 'Ada Lovelace' }],
    });

    const [inA, inB] = await waitFor(async () => [await adaIn(PORTAL_A), await adaIn(PORTAL_B)], {
      until: (records) =>
        records.every(
          (r) =>
            instant(r?.properties.syncline_last_contacted) === Date.parse(mailAt) &&
            instant(r?.properties.syncline_next_meeting) === Date.parse(meetingAt),
        ),
      timeoutMs: 90_000,
      describe: 'last contacted and next meeting in both CRMs',
    });
    for (const record of [inA!, inB!]) {
      expect(record.properties.syncline_last_contacted_via).toBe('mail_in');
      expect(record.properties.syncline_mails_in_30d).toBe('1');
      expect(record.properties.syncline_engagement_trend).toBe('warming');
    }
    // What the record page shows: the same results through the API.
    const shown = await insights();
    expect(Date.parse(shown.lastContactedAt!)).toBe(Date.parse(mailAt));
    expect(Date.parse(shown.nextMeetingAt!)).toBe(Date.parse(meetingAt));
    expect(shown.lastContactedVia).toBe('mail_in');
  });

  it('2. a burst of 500 mails writes each record’s properties at most once per period', async ({
    onTestFailed,
  }) => {
    onTestFailed(() => dumpSyncState(s, 'activity insights'));
    const started = Date.now();
    await mailsFromAda(500, 'Burst');
    await bothCrmsCount(sentSoFar);
    const took = Date.now() - started;
    for (const portal of [PORTAL_A, PORTAL_B]) {
      const record = (await adaIn(portal))!;
      const read = await hubspotGet<{
        propertiesWithHistory: Record<string, { value: string; timestamp: string }[]>;
      }>(portal, `/crm/v3/objects/contacts/${record.id}?propertiesWithHistory=syncline_mails_in_30d`);
      const writes = read.propertiesWithHistory
        .syncline_mails_in_30d!.map((v) => Date.parse(v.timestamp))
        .sort((x, y) => x - y);
      const burst = writes.filter((t) => t >= started);
      // Each write of the burst came a whole period after the one before it.
      for (let i = 1; i < burst.length; i++)
        expect(burst[i]! - burst[i - 1]!).toBeGreaterThanOrEqual(PERIOD_MS);
      console.info(
        `portal ${portal}: ${burst.length} writes of the insights for a burst of 500 mails over ${took} ms`,
      );
      // So a burst of 500 mails cost a handful of writes, not one per mail.
      expect(burst.length).toBeGreaterThan(0);
      expect(burst.length).toBeLessThanOrEqual(Math.ceil(took / PERIOD_MS) + 1);
    }
  });

  it('3. a SIGKILL of the workers mid-stream changes no result', async ({ onTestFailed }) => {
    onTestFailed(() => dumpSyncState(s, 'activity insights'));
    const before = await s.query<{ n: number }>(`SELECT count(*)::int AS n FROM activity_contribution`);
    await mailsFromAda(200, 'Crash');
    // Killed while the mails are being folded: some counted, some not yet.
    await waitFor(
      async () =>
        (await s.query<{ n: number }>(`SELECT count(*)::int AS n FROM activity_contribution`))[0]!.n,
      { until: (n) => n >= before[0]!.n + 20, timeoutMs: 60_000, describe: 'the fold under way' },
    );
    await s.kill('workers', 'SIGKILL');
    await s.restart('workers');
    // Every mail counted once: none lost to the crash, none counted twice by the replay.
    await bothCrmsCount(sentSoFar);
    const shown = await waitFor(insights, {
      until: (r) => r.last30.mailsIn === sentSoFar,
      timeoutMs: 30_000,
      describe: 'the API to count every mail once',
    });
    expect(shown.last30.mailsIn).toBe(701);
    expect(shown.last30.meetings).toBe(0);
  });

  it('4. a mail deleted in Gmail is taken back from the counts, in the API and both CRMs', async ({
    onTestFailed,
  }) => {
    onTestFailed(() => dumpSyncState(s, 'activity insights'));
    const mistake = await s.emulator.google.gmail.insert(ME, {
      from: `Ada Lovelace <${ADA}>`,
      to: [ME],
      subject: 'Sent by mistake',
      text: 'Ignore this one.',
      date: new Date(Date.now() - 60 * 60_000).toISOString(),
      messageId: '<sent-by-mistake@analytical-e2e.example>',
    });
    sentSoFar += 1;
    await bothCrmsCount(sentSoFar);
    await s.emulator.google.gmail.remove(ME, mistake.id);
    sentSoFar -= 1;
    await bothCrmsCount(sentSoFar);
    const shown = await waitFor(insights, {
      until: (r) => r.last30.mailsIn === sentSoFar,
      timeoutMs: 30_000,
      describe: 'the API to take the deleted mail back',
    });
    expect(shown.last30.mailsIn).toBe(701);
  });
});
