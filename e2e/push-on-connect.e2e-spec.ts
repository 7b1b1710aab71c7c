import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpSyncState } from './support/diagnostics';
import { type SyncSystem, startSystem, waitFor } from './support/system';

// A newly connected Google Calendar and Gmail are watched from their first pull on: the first
// change after connecting reaches Syncline by push notification, not by the fallback pull.
// The fallback pull is set to an hour (it runs once as the workers start, before anything is
// connected), and the renewal job that used to be the only one to open watches runs every 10
// minutes (once at start, too): arriving within 2 s can only be push.

const EMAIL = 'push.first@syncline-e2e.example';
const PUSH_WITHIN_MS = 2_000;

interface Row {
  id: string;
  fields: Record<string, unknown>;
}

describe('push from the first change after connecting Google', () => {
  let s: SyncSystem;
  let accessToken: string;
  const rows = async (collection: string): Promise<Row[]> =>
    (await s.api<{ data: Row[] }>('GET', `/api/v1/${collection}?limit=100`)).body.data;
  /** How many notifications of `kind` the emulator delivered to our API (answered 2xx). */
  const delivered = async (kind: 'calendar' | 'gmail'): Promise<number> =>
    (await s.emulator.google.deliveries(EMAIL)).filter(
      (d) => d.kind === kind && typeof d.outcome === 'number' && d.outcome < 300,
    ).length;

  beforeAll(async () => {
    s = await startSystem({ label: 'push_on_connect', pullIntervalMs: 3_600_000 });
    const google = await s.emulator.google.createUser(EMAIL, {
      // The Pub/Sub push subscription of the Gmail topic, as an operator would configure it.
      pushUrl: `${s.urls.api}/webhooks/gmail?token=${s.gmailPushToken}`,
    });
    await s.emulator.google.calendar.create(EMAIL, {
      summary: 'Kickoff',
      start: { dateTime: '2030-05-06T09:00:00.000Z' },
      end: { dateTime: '2030-05-06T09:30:00.000Z' },
      attendees: [{ email: 'buyer@acme.example' }],
    });
    accessToken = google.accessToken;
    const credentials = {
      accessToken: google.accessToken,
      refreshToken: google.refreshToken,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    };
    await s.connect('google-calendar', EMAIL, credentials, { displayName: 'Calendar' });
    await s.connect('gmail', EMAIL, credentials, { displayName: 'Gmail' });
    await waitFor(
      async () => (await s.api<{ data: { status: string }[] }>('GET', '/api/v1/connections')).body.data,
      {
        until: (list) => list.length === 2 && list.every((c) => c.status === 'live'),
        timeoutMs: 30_000,
        describe: 'both connections to be live',
      },
    );
    await waitFor(async () => (await rows('meetings')).find((m) => m.fields.title === 'Kickoff'), {
      timeoutMs: 15_000,
      describe: 'the backfilled meeting in Syncline',
    });
  }, 120_000);

  afterAll(async () => {
    await s?.stop();
  });

  it('opens a Calendar watch channel when the connection is made', async ({ onTestFailed }) => {
    onTestFailed(() => dumpSyncState(s, 'push on connect'));
    const channels = await waitFor(() => s.emulator.google.calendar.channels(EMAIL), {
      until: (list) => list.length > 0,
      timeoutMs: 5_000,
      describe: 'a watch channel on the calendar',
    });
    expect(channels).toHaveLength(1);
  });

  it('the first calendar edit after connecting arrives by push in under 2 s', async ({ onTestFailed }) => {
    onTestFailed(() => dumpSyncState(s, 'push on connect'));
    const [event] = await s.emulator.google.calendar.list(EMAIL);
    const notified = await delivered('calendar');
    const started = Date.now();
    await s.emulator.google.calendar.update(EMAIL, event!.id, { summary: 'Kickoff (moved)' });
    await waitFor(async () => (await rows('meetings')).find((m) => m.fields.title === 'Kickoff (moved)'), {
      timeoutMs: PUSH_WITHIN_MS,
      intervalMs: 50,
      describe: `the renamed meeting in Syncline within ${PUSH_WITHIN_MS} ms`,
    });
    const elapsed = Date.now() - started;
    console.log(`calendar edit arrived in ${elapsed} ms`);
    expect(elapsed).toBeLessThan(PUSH_WITHIN_MS);
    expect(await delivered('calendar')).toBeGreaterThan(notified);
  });

  it('the first mail after connecting arrives by push in under 2 s', async ({ onTestFailed }) => {
    onTestFailed(() => dumpSyncState(s, 'push on connect'));
    const notified = await delivered('gmail');
    const started = Date.now();
    await s.emulator.google.gmail.insert(EMAIL, {
      from: 'buyer@acme.example',
      to: [EMAIL],
      subject: 'Re: Kickoff',
    });
    await waitFor(
      async () => (await rows('email-activities')).find((m) => m.fields.subject === 'Re: Kickoff'),
      {
        timeoutMs: PUSH_WITHIN_MS,
        intervalMs: 50,
        describe: `the mail in Syncline within ${PUSH_WITHIN_MS} ms`,
      },
    );
    const elapsed = Date.now() - started;
    console.log(`mail arrived in ${elapsed} ms`);
    expect(elapsed).toBeLessThan(PUSH_WITHIN_MS);
    expect(await delivered('gmail')).toBeGreaterThan(notified);
  });

  it('a calendar whose channel expired while paused is watched again on resume', async ({ onTestFailed }) => {
    onTestFailed(() => dumpSyncState(s, 'push on connect'));
    const connections = await s.api<{ data: { id: string; provider: string }[] }>(
      'GET',
      '/api/v1/connections',
    );
    const calendar = connections.body.data.find((c) => c.provider === 'google-calendar')!;
    expect((await s.api('POST', `/api/v1/connections/${calendar.id}/pause`)).status).toBe(200);
    // The channel ends while paused (the renewal job skips paused connections): stopped at
    // Google, and past its expiry in our row.
    const [old] = await s.emulator.google.calendar.channels(EMAIL);
    const stopped = await fetch(`${s.urls.google}/calendar/v3/channels/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: old!.id, resourceId: old!.resourceId }),
    });
    expect(stopped.status).toBe(204);
    await s.query(`UPDATE push_subscription SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      old!.id,
    ]);

    expect((await s.api('POST', `/api/v1/connections/${calendar.id}/resume`)).status).toBe(200);
    const [renewed] = await waitFor(() => s.emulator.google.calendar.channels(EMAIL), {
      until: (list) => list.length === 1 && list[0]!.id !== old!.id,
      timeoutMs: 5_000,
      describe: 'a new watch channel after the resume',
    });
    expect(renewed!.id).not.toBe(old!.id);

    const [event] = await s.emulator.google.calendar.list(EMAIL);
    const started = Date.now();
    await s.emulator.google.calendar.update(EMAIL, event!.id, { summary: 'Kickoff (resumed)' });
    await waitFor(async () => (await rows('meetings')).find((m) => m.fields.title === 'Kickoff (resumed)'), {
      timeoutMs: PUSH_WITHIN_MS,
      intervalMs: 50,
      describe: `the renamed meeting in Syncline within ${PUSH_WITHIN_MS} ms of the resume`,
    });
    console.log(`calendar edit after the resume arrived in ${Date.now() - started} ms`);
  });
});
