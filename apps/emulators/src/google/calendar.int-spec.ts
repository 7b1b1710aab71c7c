import type { calendar_v3 } from 'googleapis/build/src/apis/calendar';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectSchema } from './testing/expect-schema';
import { apiError, type CreatedUser, GoogleHarness } from './testing/google-harness';
import { PushReceiver } from './testing/push-receiver';

let google: GoogleHarness;
let user: CreatedUser;
let cal: calendar_v3.Calendar;

const event = (n: number, extra: calendar_v3.Schema$Event = {}): calendar_v3.Schema$Event => ({
  summary: `Meeting ${n}`,
  start: { dateTime: `2030-01-${String((n % 28) + 1).padStart(2, '0')}T10:00:00Z` },
  end: { dateTime: `2030-01-${String((n % 28) + 1).padStart(2, '0')}T11:00:00Z` },
  ...extra,
});

/** Pages through events.list the way Google's sample does, keeping every page. */
async function listAll(
  params: calendar_v3.Params$Resource$Events$List,
): Promise<calendar_v3.Schema$Events[]> {
  const pages: calendar_v3.Schema$Events[] = [];
  let pageToken: string | undefined;
  do {
    const res = await cal.events.list({
      calendarId: 'primary',
      ...params,
      ...(pageToken ? { pageToken } : {}),
    });
    expectSchema('calendar', 'Events', res.data);
    pages.push(res.data);
    pageToken = res.data.nextPageToken ?? undefined;
  } while (pageToken);
  return pages;
}

const itemsOf = (pages: calendar_v3.Schema$Events[]) => pages.flatMap((p) => p.items ?? []);

beforeAll(async () => {
  google = await GoogleHarness.start();
});

afterAll(async () => {
  await google.close();
});

beforeEach(async () => {
  await google.control('POST', '/_emulator/reset');
  user = await google.createUser('dana@example.com');
  cal = google.calendar(google.oauthClient(user));
});

describe('events.list with sync tokens', () => {
  it('syncs incrementally across short and empty pages, then answers 410 once cursors are invalidated', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 12; n++)
      ids.push((await cal.events.insert({ calendarId: 'primary', requestBody: event(n) })).data.id!);

    const full = await listAll({ maxResults: 5 });
    expect(full.map((p) => p.items?.length)).toEqual([5, 5, 2]);
    expect(full.slice(0, -1).every((p) => p.nextPageToken && !p.nextSyncToken)).toBe(true);
    const syncToken = full.at(-1)!.nextSyncToken!;
    expect(syncToken).toBeTruthy();

    // The user edits in Google Calendar: one event moved, one deleted, one added.
    await google.control('PATCH', `/_emulator/google/users/${user.email}/ui/calendar/events/${ids[10]}`, {
      summary: 'Moved',
    });
    await google.control('DELETE', `/_emulator/google/users/${user.email}/ui/calendar/events/${ids[1]}`);
    const added = await google.control<{ id: string }>(
      'POST',
      `/_emulator/google/users/${user.email}/ui/calendar/events`,
      event(40),
    );

    const incremental = await listAll({ syncToken, maxResults: 2 });
    expect(incremental.length).toBe(7);
    expect(incremental.some((p) => (p.items ?? []).length === 0 && p.nextPageToken)).toBe(true);
    expect(incremental.slice(0, -1).every((p) => !p.nextSyncToken)).toBe(true);
    const changes = itemsOf(incremental);
    expect(changes.map((e) => [e.id, e.status])).toEqual([
      [ids[1], 'cancelled'],
      [ids[10], 'confirmed'],
      [added.body.id, 'confirmed'],
    ]);
    expect(changes[1]?.summary).toBe('Moved');

    const quiet = await listAll({ syncToken: incremental.at(-1)!.nextSyncToken! });
    expect(itemsOf(quiet)).toEqual([]);

    await google.fault({ kind: 'invalidate-cursors', account: user.email, count: 1 });
    const gone = await apiError(
      cal.events.list({ calendarId: 'primary', syncToken: quiet.at(-1)!.nextSyncToken! }),
    );
    expect(gone).toEqual({
      status: 410,
      data: {
        error: {
          errors: [
            {
              domain: 'calendar',
              reason: 'fullSyncRequired',
              message: 'Sync token is no longer valid, a full sync is required.',
              locationType: 'parameter',
              location: 'syncToken',
            },
          ],
          code: 410,
          message: 'Sync token is no longer valid, a full sync is required.',
        },
      },
    });
    // The older token is dead too; a full sync starts over and its token works again.
    expect((await apiError(cal.events.list({ calendarId: 'primary', syncToken }))).status).toBe(410);
    const resync = await listAll({});
    expect(itemsOf(resync)).toHaveLength(12);
    expect(itemsOf(await listAll({ syncToken: resync.at(-1)!.nextSyncToken! }))).toEqual([]);
  });

  it('refuses filters beside a syncToken and returns deletions with showDeleted', async () => {
    const a = (await cal.events.insert({ calendarId: 'primary', requestBody: event(1) })).data;
    await cal.events.delete({ calendarId: 'primary', eventId: a.id! });
    const token = (await listAll({})).at(-1)!.nextSyncToken!;
    const refused = await apiError(
      cal.events.list({ calendarId: 'primary', syncToken: token, timeMin: '2030-01-01T00:00:00Z' }),
    );
    expect(refused.status).toBe(400);
    expect(itemsOf(await listAll({}))).toEqual([]);
    expect(itemsOf(await listAll({ showDeleted: true }))).toEqual([
      { kind: 'calendar#event', etag: expect.any(String), id: a.id, status: 'cancelled' },
    ]);
  });
});

describe('events writes', () => {
  it('inserts a client-chosen id once and answers 409 duplicate the second time', async () => {
    const body = event(1, { id: 'c0ffee0a1b2c3d' });
    const first = await cal.events.insert({ calendarId: 'primary', requestBody: body });
    expectSchema('calendar', 'Event', first.data);
    expect(first.data).toMatchObject({
      id: 'c0ffee0a1b2c3d',
      iCalUID: 'c0ffee0a1b2c3d@google.com',
      status: 'confirmed',
      sequence: 0,
      organizer: { email: user.email, self: true },
    });
    // Typed as Node headers, but gaxios hands over a fetch Headers object.
    expect((first.headers as unknown as Headers).get('etag')).toBe(first.data.etag);
    expect(first.data.etag).toMatch(/^"\d+"$/);
    expect(first.data.updated).toMatch(/\.\d{3}Z$/);

    const again = await apiError(cal.events.insert({ calendarId: 'primary', requestBody: body }));
    expect(again).toMatchObject({
      status: 409,
      data: { error: { code: 409, errors: [{ reason: 'duplicate' }] } },
    });
    const badId = await apiError(
      cal.events.insert({ calendarId: 'primary', requestBody: event(2, { id: 'Not_Base32!' }) }),
    );
    expect(badId.status).toBe(400);
  });

  it('answers 412 to a stale If-Match and 304 to a current If-None-Match', async () => {
    const created = (await cal.events.insert({ calendarId: 'primary', requestBody: event(1) })).data;
    const patched = await cal.events.patch(
      { calendarId: 'primary', eventId: created.id!, requestBody: { summary: 'Renamed' } },
      { headers: { 'If-Match': created.etag! } },
    );
    expect(patched.data.etag).not.toBe(created.etag);
    const stale = await apiError(
      cal.events.patch(
        { calendarId: 'primary', eventId: created.id!, requestBody: { summary: 'Lost update' } },
        { headers: { 'If-Match': created.etag! }, retry: false },
      ),
    );
    expect(stale).toMatchObject({
      status: 412,
      data: { error: { errors: [{ reason: 'conditionNotMet' }] } },
    });
    const unchanged = await cal.events.get(
      { calendarId: 'primary', eventId: created.id! },
      { headers: { 'If-None-Match': patched.data.etag! } },
    );
    expect(unchanged.status).toBe(304);
  });

  it('filters on private extended properties, merges them on patch, and keeps attendee responses', async () => {
    const mine = await cal.events.insert({
      calendarId: 'primary',
      requestBody: event(1, {
        extendedProperties: { private: { synclineId: 'p-1', origin: 'syncline' } },
        attendees: [
          { email: 'lee@example.com', displayName: 'Lee' },
          { email: user.email, responseStatus: 'accepted' },
        ],
      }),
    });
    await cal.events.insert({
      calendarId: 'primary',
      requestBody: event(2, { extendedProperties: { private: { origin: 'other' } } }),
    });
    await cal.events.insert({ calendarId: 'primary', requestBody: event(3) });

    const filtered = await listAll({ privateExtendedProperty: ['origin=syncline', 'synclineId=p-1'] });
    expect(itemsOf(filtered).map((e) => e.id)).toEqual([mine.data.id]);
    expect(mine.data.attendees).toEqual([
      { email: 'lee@example.com', displayName: 'Lee', responseStatus: 'needsAction' },
      { email: user.email, responseStatus: 'accepted', organizer: true, self: true },
    ]);

    const patched = await cal.events.patch({
      calendarId: 'primary',
      eventId: mine.data.id!,
      requestBody: { extendedProperties: { private: { synclineVersion: '2' } } },
    });
    expect(patched.data.extendedProperties).toEqual({
      private: { synclineId: 'p-1', origin: 'syncline', synclineVersion: '2' },
    });

    // Lee accepts in their own calendar.
    const accepted = await google.control<calendar_v3.Schema$Event>(
      'PATCH',
      `/_emulator/google/users/${user.email}/ui/calendar/events/${mine.data.id}`,
      { attendees: [{ email: 'lee@example.com', displayName: 'Lee', responseStatus: 'accepted' }] },
    );
    expect(accepted.body.attendees?.[0]?.responseStatus).toBe('accepted');
    const fetched = await cal.events.get({ calendarId: 'primary', eventId: mine.data.id! });
    expectSchema('calendar', 'Event', fetched.data);
    expect(fetched.data.attendees?.[0]?.responseStatus).toBe('accepted');
  });
});

describe('events.watch', () => {
  let receiver: PushReceiver;

  beforeEach(async () => {
    receiver = await PushReceiver.start();
    return () => receiver.close();
  });

  it('posts bodiless notifications with the X-Goog headers: sync first, then exists, until stopped', async () => {
    const channel = await cal.events.watch({
      calendarId: 'primary',
      requestBody: {
        id: 'channel-1',
        type: 'web_hook',
        address: `${receiver.url}/hooks/calendar`,
        token: 'secret-1',
      },
    });
    expectSchema('calendar', 'Channel', channel.data);
    expect(channel.data).toMatchObject({ kind: 'api#channel', id: 'channel-1', token: 'secret-1' });

    const [sync] = await receiver.waitFor(1);
    expect(sync?.path).toBe('/hooks/calendar');
    expect(sync?.body).toBe('');
    expect(sync?.headers).toMatchObject({
      'x-goog-channel-id': 'channel-1',
      'x-goog-channel-token': 'secret-1',
      'x-goog-resource-id': channel.data.resourceId,
      'x-goog-resource-uri': channel.data.resourceUri,
      'x-goog-resource-state': 'sync',
      'x-goog-message-number': '1',
    });
    expect(Date.parse(String(sync?.headers['x-goog-channel-expiration']))).toBe(
      Math.floor(Number(channel.data.expiration) / 1000) * 1000,
    );

    await google.control('POST', `/_emulator/google/users/${user.email}/ui/calendar/events`, event(1));
    await cal.events.insert({ calendarId: 'primary', requestBody: event(2) });
    const all = await receiver.waitFor(3);
    const numbers = all.map((r) => Number(r.headers['x-goog-message-number']));
    expect(all.slice(1).map((r) => r.headers['x-goog-resource-state'])).toEqual(['exists', 'exists']);
    expect(numbers[1]! - numbers[0]!).toBeGreaterThan(1);
    expect(numbers[2]! - numbers[1]!).toBeGreaterThan(1);

    await cal.channels.stop({ requestBody: { id: 'channel-1', resourceId: channel.data.resourceId! } });
    await google.control('POST', `/_emulator/google/users/${user.email}/ui/calendar/events`, event(3));
    expect(await receiver.settle()).toHaveLength(3);
  });

  it('duplicates or drops notifications on fault, and stops at expiry', async () => {
    await cal.events.watch({
      calendarId: 'primary',
      requestBody: {
        id: 'channel-2',
        type: 'web_hook',
        address: receiver.url,
        expiration: String(google.ctx.now() + 60_000),
      },
    });
    await receiver.waitFor(1);

    await google.fault({ kind: 'duplicate-webhooks', account: user.email, count: 1 });
    await google.control('POST', `/_emulator/google/users/${user.email}/ui/calendar/events`, event(1));
    const [, first, second] = await receiver.waitFor(3);
    expect(first?.headers['x-goog-message-number']).toBe(second?.headers['x-goog-message-number']);

    await google.fault({ kind: 'drop-webhooks', account: user.email, count: 1 });
    await google.control('POST', `/_emulator/google/users/${user.email}/ui/calendar/events`, event(2));
    expect(await receiver.settle()).toHaveLength(3);

    google.advanceClock(61_000);
    await google.control('POST', `/_emulator/google/users/${user.email}/ui/calendar/events`, event(3));
    expect(await receiver.settle()).toHaveLength(3);
  });
});
