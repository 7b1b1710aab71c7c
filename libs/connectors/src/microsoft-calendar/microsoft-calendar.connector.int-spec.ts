import type { SourceChangeInput } from '@syncline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cursor, PullPage, PushWrite, WebhookRequest } from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import { changeKeys, drain, unwrap } from '../contract/contract-suite';
import { graphClient } from '../microsoft-common';
import { GraphNotificationReceiver } from '../microsoft-common/testing/graph-notification-receiver';
import {
  CountingBudget,
  MicrosoftTestKit,
  type MicrosoftUser,
} from '../microsoft-common/testing/microsoft-test-kit';
import { createMicrosoftCalendarConnector } from './microsoft-calendar.connector';
import { subscriptionIdsOf, wallAt } from './microsoft-calendar.contract-harness';
import { ORIGIN_EXPAND, transactionIdFor } from './outlook-event.mapper';

const connector = createMicrosoftCalendarConnector({ pageSize: 5, retry: { baseDelayMs: 10 } });
const now = Date.now();
let kit: MicrosoftTestKit;

interface UiEvent {
  id: string;
  '@odata.etag': string;
  subject: string;
}

const event = (n: number) => ({
  subject: `Meeting ${n}`,
  start: { dateTime: wallAt(now, 3 + (n % 28), 10), timeZone: 'UTC' },
  end: { dateTime: wallAt(now, 3 + (n % 28), 11), timeZone: 'UTC' },
  attendees: [
    {
      emailAddress: { address: `guest${n}@example.com` },
      status: { response: 'accepted', time: '2030-01-01T00:00:00Z' },
    },
  ],
});

const ui = <T = UiEvent>(user: MicrosoftUser, method: string, path: string, body?: unknown) =>
  kit.ui<T>(user, method, `calendar/${path}`, body).then((r) => r.body);

async function seed(user: MicrosoftUser, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) ids.push((await ui(user, 'POST', 'events', event(n))).id);
  return ids;
}

const stored = async (user: MicrosoftUser) =>
  (await kit.state<{ events: (UiEvent & Record<string, unknown>)[] }>(user, 'calendar/events')).events;

const write = (n: number, key: string, fields: Record<string, unknown> = {}): PushWrite => ({
  op: 'create',
  entityType: 'meeting',
  idempotencyKey: key,
  entityId: '00000000-0000-4000-8000-000000000001',
  fields: {
    title: `Ours ${n}`,
    startAt: `${wallAt(now, 40 + n, 9)}.000Z`,
    endAt: `${wallAt(now, 40 + n, 9.5)}.000Z`,
    attendees: [{ email: 'ann@example.com', responseStatus: 'needsAction' }],
    ...fields,
  },
});

/** A wall-clock time in an IANA zone as a UTC ISO string. */
const inZone = (date: string, time: string, zone: string): string => {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
    .formatToParts(new Date(`${date}T${time}Z`))
    .find((p) => p.type === 'timeZoneName')!.value;
  return new Date(`${date}T${time}${name === 'GMT' ? 'Z' : name.slice(3)}`).toISOString();
};

const DAY_MS = 86_400_000;

const upserts = (changes: readonly SourceChangeInput[], id: string) =>
  changes.filter((c) => c.externalId === id && c.op === 'upsert');

beforeAll(async () => {
  kit = await MicrosoftTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('microsoft-calendar connector against the emulator', () => {
  it('backfills a calendar view over pages with a range on the first call only, then hands over a delta link', async () => {
    const user = await kit.createUser('backfill');
    const ids = await seed(user, 12);
    const budget = new CountingBudget();
    const ctx = kit.context(user, budget);
    const pages: PullPage[] = [];
    let cursor: Cursor = {};
    for (;;) {
      const page = unwrap(await connector.backfill(ctx, cursor));
      pages.push(page);
      cursor = page.cursor;
      if (page.done) break;
    }
    expect(pages.length).toBeGreaterThanOrEqual(3);
    const changes = pages.flatMap((p) => p.changes);
    expect(changes.map((c) => c.externalId).sort()).toEqual([...ids].sort());
    expect(new Set(changes.map((c) => c.eventKey)).size).toBe(changes.length);
    expect(pages.at(-1)?.progress?.seen).toBe(12);
    expect(cursor).toMatchObject({
      v: 1,
      nextLink: null,
      deltaLink: expect.stringContaining('$deltatoken='),
    });
    expect(changes[0]).toMatchObject({
      entityType: 'meeting',
      op: 'upsert',
      providerVersion: expect.stringMatching(/^W\/"/),
      fields: { attendees: [{ email: expect.stringMatching(/^guest/), responseStatus: 'accepted' }] },
    });
    // The range goes with the first request, a year back and two ahead; the tokens carry it after.
    const deltas = (await kit.requests(user)).filter((r) => r.path.startsWith('/v1.0/me/calendarView/delta'));
    expect(deltas).toHaveLength(pages.length);
    const first = new URL(deltas[0]!.path, 'https://graph.invalid').searchParams;
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    const days = (iso: string | null) => (Date.parse(iso ?? '') - today) / DAY_MS;
    expect(days(first.get('startDateTime'))).toBe(-365);
    expect(days(first.get('endDateTime'))).toBe(731);
    expect(deltas.slice(1).every((r) => /\$skiptoken=/.test(r.path) && !/startDateTime/.test(r.path))).toBe(
      true,
    );
    expect(budget.acquired).toBe(pages.length);
    // Nothing changed: the delta link reads an empty round.
    const pulled = await drain(connector, ctx, 'pull', cursor);
    expect(pulled.changes).toEqual([]);
    expect(pulled.cursor.deltaLink).toEqual(expect.any(String));
  });

  it('reads times in UTC whatever zone an event was written in, and all-day events as dates', async () => {
    const user = await kit.createUser('zones');
    const day = wallAt(now, 20, 0).slice(0, 10);
    const next = wallAt(now, 21, 0).slice(0, 10);
    const pacific = await ui(user, 'POST', 'events', {
      subject: 'Pacific',
      start: { dateTime: `${day}T09:00:00`, timeZone: 'Pacific Standard Time' },
      end: { dateTime: `${day}T09:45:00`, timeZone: 'America/Los_Angeles' },
    });
    const offsite = await ui(user, 'POST', 'events', {
      subject: 'Offsite',
      isAllDay: true,
      start: { dateTime: `${day}T00:00:00`, timeZone: 'Tokyo Standard Time' },
      end: { dateTime: `${next}T00:00:00`, timeZone: 'Tokyo Standard Time' },
    });
    const run = await drain(connector, kit.context(user), 'backfill', {});
    const nineInLa = inZone(day, '09:00:00', 'America/Los_Angeles');
    expect(upserts(run.changes, pacific.id)[0]?.fields).toMatchObject({
      startAt: nineInLa,
      endAt: new Date(Date.parse(nineInLa) + 45 * 60_000).toISOString(),
      allDay: false,
    });
    expect(upserts(run.changes, offsite.id)[0]?.fields).toMatchObject({
      startAt: day,
      endAt: next,
      allDay: true,
    });
    // An all-day meeting of ours is written as one, and reads back as the receipt says.
    const [receipt] = unwrap(
      await connector.push(kit.context(user), [
        write(1, `allday-${Date.now()}`, { startAt: day, endAt: next, allDay: true }),
      ]),
    );
    const record = (await stored(user)).find((e) => e.id === receipt!.externalId);
    expect(record).toMatchObject({ isAllDay: true, start: { dateTime: `${day}T00:00:00.0000000` } });
    const pulled = await drain(connector, kit.context(user), 'pull', run.cursor);
    const echo = upserts(pulled.changes, receipt!.externalId)[0]!;
    expect(echo.fields).toMatchObject({ startAt: day, endAt: next, allDay: true });
    expect(contentHash(echo.fields ?? {})).toBe(receipt!.contentHash);
  });

  it('creates once per idempotency key through transactionId, tagged with our origin', async () => {
    const user = await kit.createUser('idem');
    const ctx = kit.context(user);
    const w = write(2, `key-${Date.now()}`);
    const [first] = unwrap(await connector.push(ctx, [w]));
    const [second] = unwrap(await connector.push(kit.context(user), [w]));
    expect(second).toEqual(first);
    const events = await stored(user);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: first!.externalId,
      transactionId: transactionIdFor(w.idempotencyKey),
    });
    const creates = (await kit.requests(user)).filter(
      (r) => r.method === 'POST' && r.path === '/v1.0/me/events',
    );
    expect(creates.map((r) => r.status)).toEqual([201, 201]);
    // The tag is there for whoever asks for it by id (pulls cannot: delta takes no $expand).
    const tagged = (await graphClient(kit.url, user.accessToken)
      .api(`/me/events/${first!.externalId}`)
      .expand(ORIGIN_EXPAND)
      .get()) as { singleValueExtendedProperties?: { id: string; value: string }[] };
    expect(tagged.singleValueExtendedProperties?.map((p) => p.value)).toEqual([`syncline:${w.entityId}`]);
  });

  it('updates with If-Match: a stale etag is a Conflict carrying the event as pulled; deletes idempotently', async () => {
    const user = await kit.createUser('ifmatch');
    const ctx = kit.context(user);
    const start = await drain(connector, ctx, 'backfill', {});
    const [created] = unwrap(await connector.push(ctx, [write(3, `patch-${Date.now()}`)]));
    const update: PushWrite = {
      op: 'update',
      entityType: 'meeting',
      externalId: created!.externalId,
      idempotencyKey: `upd-${Date.now()}`,
      entityId: '00000000-0000-4000-8000-000000000001',
      fields: { title: 'Renamed by us', location: 'Room 9' },
      expectedVersion: created!.providerVersion,
    };
    const [updated] = unwrap(await connector.push(ctx, [update]));
    expect(updated!.providerVersion).not.toBe(created!.providerVersion);
    const stale = await connector.push(ctx, [{ ...update, fields: { title: 'Again' } }]);
    expect(stale.ok ? 'ok' : stale.error.code).toBe('Conflict');
    expect(stale.ok ? undefined : stale.error.failedKeys).toEqual([update.idempotencyKey]);
    // The 412 carried the event as a pull of that version reports it, key included.
    const pulled = await drain(connector, ctx, 'pull', start.cursor);
    const latest = upserts(pulled.changes, created!.externalId).at(-1)!;
    expect(latest).toMatchObject({
      providerVersion: updated!.providerVersion,
      fields: { title: 'Renamed by us', location: 'Room 9' },
    });
    expect(stale.ok ? undefined : stale.error.current).toEqual([latest]);
    expect((await stored(user))[0]?.subject).toBe('Renamed by us');
    // A stale delete is refused too; with the current version it goes, and a retry finds it gone.
    const del: PushWrite = { ...update, op: 'delete', fields: {}, idempotencyKey: `del-${Date.now()}` };
    const staleDelete = await connector.push(ctx, [del]);
    expect(staleDelete.ok ? 'ok' : staleDelete.error.code).toBe('Conflict');
    unwrap(await connector.push(ctx, [{ ...del, expectedVersion: updated!.providerVersion }]));
    unwrap(await connector.push(ctx, [{ ...del, expectedVersion: updated!.providerVersion }]));
    expect(await stored(user)).toEqual([]);
    // An update of an event that is gone names the write.
    const gone = await connector.push(ctx, [{ ...update, expectedVersion: undefined }]);
    expect(gone.ok ? 'ok' : [gone.error.code, gone.error.failedKeys]).toEqual([
      'NotFound',
      [update.idempotencyKey],
    ]);
  });

  it('answers CursorInvalid on syncStateNotFound (400 or 410), and a backfill gives the same set with no new keys', async () => {
    const user = await kit.createUser('resync');
    const ids = await seed(user, 11);
    const first = await drain(connector, kit.context(user), 'backfill', {});
    for (const status of [400, 410]) {
      await kit.control(
        'POST',
        `/_emulator/microsoft/users/${encodeURIComponent(user.upn)}/calendar/invalidate-delta`,
        {
          status,
          restart: status === 410,
        },
      );
      const refused = await connector.pull(kit.context(user), first.cursor);
      expect(refused.ok ? 'ok' : [refused.error.code, refused.error.status]).toEqual([
        'CursorInvalid',
        status,
      ]);
      const again = await drain(connector, kit.context(user), 'backfill', {});
      expect(again.changes.map((c) => c.externalId).sort()).toEqual([...ids].sort());
      const seen = new Set(first.changes.map((c) => c.eventKey));
      expect(again.changes.filter((c) => !seen.has(c.eventKey))).toEqual([]);
      // The fresh delta link works.
      expect((await drain(connector, kit.context(user), 'pull', again.cursor)).changes).toEqual([]);
    }
    // A cursor pull cannot use: none, a backfill's middle, or a link off this connection's Graph.
    const middle = unwrap(await connector.backfill(kit.context(user), {})).cursor;
    const foreign = {
      ...first.cursor,
      deltaLink: 'https://graph.evil.example/v1.0/me/calendarView/delta?$deltatoken=x',
    };
    for (const cursor of [{}, middle, foreign]) {
      const res = await connector.pull(kit.context(user), cursor);
      expect(res.ok ? 'ok' : res.error.code).toBe('CursorInvalid');
    }
  });

  it('reads a series as its occurrences; a cancelled occurrence is a tombstone, an edited one an upsert', async () => {
    const user = await kit.createUser('series');
    const day = wallAt(now, 10, 0).slice(0, 10);
    const series = await ui(user, 'POST', 'events', {
      subject: 'Stand-up',
      start: { dateTime: `${day}T09:00:00`, timeZone: 'W. Europe Standard Time' },
      end: { dateTime: `${day}T09:15:00`, timeZone: 'W. Europe Standard Time' },
      recurrence: {
        pattern: { type: 'daily', interval: 1 },
        range: { type: 'numbered', startDate: day, numberOfOccurrences: 3 },
      },
    });
    const ctx = kit.context(user);
    const backfill = await drain(connector, ctx, 'backfill', {});
    const occurrences = backfill.changes;
    expect(occurrences).toHaveLength(3);
    expect(occurrences.map((c) => c.externalId)).not.toContain(series.id);
    expect(new Set(occurrences.map((c) => c.fields?.iCalUID)).size).toBe(3);
    // 09:00 in Berlin on each of three days, in UTC.
    expect(occurrences.map((c) => c.fields?.startAt).sort()).toEqual(
      [0, 1, 2].map((d) => inZone(wallAt(now, 10 + d, 0).slice(0, 10), '09:00:00', 'Europe/Berlin')),
    );
    const [a, b, c] = occurrences.map((o) => o.externalId);
    await ui(user, 'DELETE', `events/${b}`);
    const [edited] = unwrap(
      await connector.push(ctx, [
        {
          op: 'update',
          entityType: 'meeting',
          externalId: c!,
          idempotencyKey: `occ-${Date.now()}`,
          entityId: '00000000-0000-4000-8000-000000000002',
          fields: { title: 'Stand-up (moved room)', location: 'Room 2' },
        },
      ]),
    );
    const pulled = await drain(connector, ctx, 'pull', backfill.cursor);
    expect(pulled.changes.filter((x) => x.externalId === b).map((x) => x.op)).toEqual(['delete']);
    expect(upserts(pulled.changes, c!).at(-1)).toMatchObject({
      providerVersion: edited!.providerVersion,
      fields: { title: 'Stand-up (moved room)', location: 'Room 2' },
    });
    expect(contentHash(upserts(pulled.changes, c!).at(-1)!.fields ?? {})).toBe(edited!.contentHash);
    expect(upserts(pulled.changes, a!).at(-1)?.fields).toMatchObject({ title: 'Stand-up' });
    // Redelivered from the same cursor, the round has the same keys, the removal's included.
    const again = await drain(connector, ctx, 'pull', backfill.cursor);
    expect(changeKeys(again.changes).sort()).toEqual(changeKeys(pulled.changes).sort());
  });

  it('keeps to the range the backfill opened, but never reports an event that left it as deleted', async () => {
    const user = await kit.createUser('range');
    const far = await ui(user, 'POST', 'events', {
      subject: 'Far ahead',
      start: { dateTime: wallAt(now, 800, 9), timeZone: 'UTC' },
      end: { dateTime: wallAt(now, 800, 10), timeZone: 'UTC' },
    });
    const [near] = await seed(user, 1);
    const ctx = kit.context(user);
    const backfill = await drain(connector, ctx, 'backfill', {});
    expect(backfill.changes.map((c) => c.externalId)).toEqual([near]);
    await ui(user, 'PATCH', `events/${near}`, {
      start: { dateTime: wallAt(now, 900, 9), timeZone: 'UTC' },
      end: { dateTime: wallAt(now, 900, 10), timeZone: 'UTC' },
    });
    await ui(user, 'PATCH', `events/${far.id}`, { subject: 'Still far' });
    const pulled = await drain(connector, ctx, 'pull', backfill.cursor);
    // Moved out of the range, or changed outside it, an event reads as removed in Graph's delta;
    // read once, it is the meeting as it is now, not a delete.
    expect(pulled.changes.map((c) => `${c.externalId} ${c.op}`).sort()).toEqual(
      [`${near} upsert`, `${far.id} upsert`].sort(),
    );
    expect(upserts(pulled.changes, near!).at(-1)?.fields?.startAt).toBe(`${wallAt(now, 900, 9)}.000Z`);
    expect(upserts(pulled.changes, far.id).at(-1)?.fields?.title).toBe('Still far');
    // Once the range reaches less far ahead than asked, pull asks for a backfill with a new one.
    const shortSighted = createMicrosoftCalendarConnector({ futureDays: 30, minAheadDays: 40 });
    const opened = await drain(shortSighted, ctx, 'backfill', {});
    const refused = await shortSighted.pull(ctx, opened.cursor);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('CursorInvalid');
  });

  it('subscribes, verifies and parses change and lifecycle notifications, and unsubscribes', async () => {
    const user = await kit.createUser('subscribe');
    const receiver = await GraphNotificationReceiver.start();
    try {
      const ctx = kit.context(user);
      const url = `${receiver.url}/microsoft-calendar`;
      const sub = unwrap(await connector.subscribe!(ctx, url, 'state-1'));
      const ahead = sub.expiresAt.getTime() - Date.now();
      expect(ahead).toBeGreaterThan(4_200 * 60_000);
      expect(ahead).toBeLessThanOrEqual(4_230 * 60_000);
      // Both URLs passed the validation handshake.
      expect(receiver.validations).toHaveLength(2);
      const listed = await kit.control<{ subscriptions: Record<string, unknown>[] }>(
        'GET',
        '/_emulator/microsoft/subscriptions',
      );
      expect(listed.body.subscriptions.find((s) => s.id === sub.id)).toMatchObject({
        resource: '/me/events',
        changeType: 'created,updated,deleted',
        notificationUrl: url,
        lifecycleNotificationUrl: url,
        clientState: 'state-1',
      });
      await seed(user, 1);
      const created = await receiver.waitFor((r) => subscriptionIdsOf(r).includes(sub.id));
      const secrets = {
        channels: [
          { id: 'other', token: 'x' },
          { id: sub.id, token: 'state-1' },
        ],
      };
      expect(connector.verifyWebhook(created, secrets)).toEqual({ ok: true, value: undefined });
      const scope = { connectionId: ctx.connectionId, workspaceId: ctx.workspaceId };
      expect(unwrap(connector.parseWebhook(created, scope))).toEqual({
        kind: 'pull',
        reason: 'calendar created',
      });

      const refusedBy = (request: WebhookRequest, s = secrets) => {
        const verdict = connector.verifyWebhook(request, s);
        return verdict.ok ? 'verified' : verdict.error.code;
      };
      const body = JSON.parse(created.rawBody) as { value: Record<string, unknown>[] };
      const withBody = (value: unknown): WebhookRequest => ({ ...created, rawBody: JSON.stringify(value) });
      // One foreign notification spoils the POST; so does anything unreadable, or no registered subscription.
      expect(
        refusedBy(withBody({ value: [...body.value, { ...body.value[0], subscriptionId: 'other' }] })),
      ).toBe('Validation');
      expect(refusedBy(withBody({ value: [{ ...body.value[0], clientState: undefined }] }))).toBe(
        'Validation',
      );
      expect(refusedBy(withBody({ value: [] }))).toBe('Validation');
      expect(refusedBy({ ...created, rawBody: 'not json' })).toBe('Validation');
      expect(refusedBy(created, { channels: [] })).toBe('Validation');
      expect(connector.parseWebhook({ ...created, rawBody: '{}' }, scope).ok).toBe(false);

      const lifecycle = async (event: string) => {
        await kit.control('POST', `/_emulator/microsoft/subscriptions/${sub.id}/lifecycle`, { event });
        const got = await receiver.waitFor((r) => r.rawBody.includes(`"lifecycleEvent":"${event}"`));
        expect(refusedBy(got)).toBe('verified');
        return unwrap(connector.parseWebhook(got, scope));
      };
      expect(await lifecycle('reauthorizationRequired')).toMatchObject({
        kind: 'pull',
        subscription: 'reauthorize',
      });
      const missed = await lifecycle('missed');
      expect(missed.kind === 'pull' ? [missed.kind, missed.subscription] : []).toEqual(['pull', undefined]);
      expect(await lifecycle('subscriptionRemoved')).toMatchObject({
        kind: 'pull',
        subscription: 'recreate',
      });
      // Graph removed it: unsubscribing finds it gone, which is done.
      unwrap(await connector.unsubscribe!(ctx, sub));

      const second = unwrap(await connector.subscribe!(ctx, url, 'state-2'));
      unwrap(await connector.unsubscribe!(ctx, second));
      const after = await kit.control<{ subscriptions: { id: string }[] }>(
        'GET',
        '/_emulator/microsoft/subscriptions',
      );
      expect(after.body.subscriptions.map((s) => s.id)).not.toContain(second.id);
    } finally {
      await receiver.close();
    }
  });

  it('pushes several conditional writes all or nothing', async () => {
    const user = await kit.createUser('batch');
    const [x, y] = await seed(user, 2);
    const ctx = kit.context(user);
    const start = await drain(connector, ctx, 'backfill', {});
    const version = (id: string) => upserts(start.changes, id)[0]!.providerVersion!;
    await ui(user, 'DELETE', `events/${y}`);
    const update = (id: string, n: number): PushWrite => ({
      op: 'update',
      entityType: 'meeting',
      externalId: id,
      idempotencyKey: `batch-${n}`,
      entityId: '00000000-0000-4000-8000-000000000003',
      fields: { title: `Batch ${n}` },
      expectedVersion: version(id),
    });
    const refused = await connector.push(ctx, [update(x!, 1), update(y!, 2)]);
    expect(refused.ok ? 'ok' : [refused.error.code, refused.error.failedKeys]).toEqual([
      'NotFound',
      ['batch-2'],
    ]);
    expect((await stored(user)).find((e) => e.id === x)?.subject).toBe('Meeting 0');
    const receipts = unwrap(
      await connector.push(ctx, [update(x!, 3), write(4, `batch-create-${Date.now()}`)]),
    );
    expect(receipts.map((r) => r.idempotencyKey)).toEqual([
      'batch-3',
      expect.stringMatching(/^batch-create-/),
    ]);
    expect((await stored(user)).map((e) => e.subject).sort()).toEqual(['Batch 3', 'Ours 4']);
  });
});
