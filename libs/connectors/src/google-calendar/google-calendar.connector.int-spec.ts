import type { SourceChangeInput } from '@syncline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionContext, Cursor, PullPage, PushWrite } from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import { changeKeys, drain, unwrap } from '../contract/contract-suite';
import { GoogleTestKit, type GoogleUser } from '../google-common/testing/google-test-kit';
import { WebhookReceiver } from '../google-common/testing/webhook-receiver';
import { createGoogleCalendarConnector } from './google-calendar.connector';

const connector = createGoogleCalendarConnector({ pageSize: 5, retry: { baseDelayMs: 10 } });
let kit: GoogleTestKit;

const event = (n: number) => ({
  summary: `Meeting ${n}`,
  start: { dateTime: `2030-01-${String((n % 28) + 1).padStart(2, '0')}T10:00:00Z` },
  end: { dateTime: `2030-01-${String((n % 28) + 1).padStart(2, '0')}T11:00:00Z` },
  attendees: [{ email: `guest${n}@example.com`, responseStatus: 'accepted' }],
});

async function seed(user: GoogleUser, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++)
    ids.push((await kit.ui<{ id: string }>(user, 'POST', 'calendar/events', event(n))).body.id);
  return ids;
}

const write = (n: number, key: string): PushWrite => ({
  op: 'create',
  entityType: 'meeting',
  idempotencyKey: key,
  entityId: '00000000-0000-4000-8000-000000000001',
  fields: {
    title: `Ours ${n}`,
    startAt: '2030-02-01T09:00:00.000Z',
    endAt: '2030-02-01T09:30:00.000Z',
    attendees: [{ email: 'ann@example.com', responseStatus: 'needsAction' }],
  },
});

beforeAll(async () => {
  kit = await GoogleTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('google-calendar connector against the emulator', () => {
  it('backfills over short and empty pages, then hands over a sync token', async () => {
    const user = await kit.createUser('backfill');
    const ids = await seed(user, 14);
    // Five cancelled events in a row leave one page window with nothing live in it.
    for (const id of ids.slice(5, 10)) await kit.ui(user, 'DELETE', `calendar/events/${id}`);
    const ctx = kit.context(user);
    const pages: PullPage[] = [];
    let cursor: Cursor = {};
    for (;;) {
      const page = unwrap(await connector.backfill(ctx, cursor));
      pages.push(page);
      cursor = page.cursor;
      if (page.done) break;
    }
    expect(pages.some((p) => p.changes.length === 0 && !p.done)).toBe(true);
    const changes = pages.flatMap((p) => p.changes);
    expect(changes.map((c) => c.externalId).sort()).toEqual([...ids.slice(0, 5), ...ids.slice(10)].sort());
    expect(new Set(changes.map((c) => c.eventKey)).size).toBe(changes.length);
    expect(cursor.syncToken).toEqual(expect.any(String));
    expect(pages.at(-1)?.progress?.seen).toBe(9);
    const first = changes[0]!;
    expect(first).toMatchObject({
      entityType: 'meeting',
      op: 'upsert',
      providerVersion: expect.stringMatching(/^"/),
    });
    expect(first.fields).toMatchObject({
      attendees: [{ email: expect.any(String), responseStatus: 'accepted' }],
    });
    // Nothing changed: pulling from the token pages through to an empty result.
    const pulled = await drain(connector, ctx, 'pull', cursor);
    expect(pulled.changes).toEqual([]);
    expect(pulled.cursor.syncToken).toEqual(expect.any(String));
  });

  it('resumes from a saved cursor after a crash with no gap and no duplicate', async () => {
    const user = await kit.createUser('resume');
    const ids = await seed(user, 17);
    const committed: SourceChangeInput[] = [];
    let cursor: Cursor = {};
    for (let i = 0; i < 2; i++) {
      const page = unwrap(await connector.backfill(kit.context(user), cursor));
      committed.push(...page.changes);
      cursor = JSON.parse(JSON.stringify(page.cursor)) as Cursor;
    }
    unwrap(await connector.backfill(kit.context(user), cursor)); // fetched, never committed
    const rest = await drain(connector, kit.context(user), 'backfill', cursor);
    committed.push(...rest.changes);
    expect(new Set(committed.map((c) => c.externalId))).toEqual(new Set(ids));
    expect(new Set(changeKeys(committed)).size).toBe(committed.length);
  });

  it('pulls an edit as an upsert and a delete as a tombstone; a redelivery has the same keys', async () => {
    const user = await kit.createUser('pull');
    const [changed, deleted] = await seed(user, 6);
    const backfill = await drain(connector, kit.context(user), 'backfill', {});
    await kit.ui(user, 'PATCH', `calendar/events/${changed}`, { summary: 'Moved', location: 'Room 2' });
    await kit.ui(user, 'DELETE', `calendar/events/${deleted}`);
    const pulled = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    const upsert = pulled.changes.find((c) => c.externalId === changed);
    expect(upsert).toMatchObject({ op: 'upsert', fields: { title: 'Moved', location: 'Room 2' } });
    expect(backfill.changes.map((c) => c.eventKey)).not.toContain(upsert!.eventKey);
    const tombstone = pulled.changes.find((c) => c.externalId === deleted);
    expect(tombstone).toMatchObject({ op: 'delete', fields: {} });
    const again = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(changeKeys(again.changes).sort()).toEqual(changeKeys(pulled.changes).sort());
  });

  it('answers CursorInvalid on 410, and a full resync gives the same set with no new keys', async () => {
    const user = await kit.createUser('resync');
    const ids = await seed(user, 12);
    const first = await drain(connector, kit.context(user), 'backfill', {});
    await kit.fault({ kind: 'invalidate-cursors', account: user.email, count: 1 });
    const refused = await connector.pull(kit.context(user), first.cursor);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('CursorInvalid');
    const again = await drain(connector, kit.context(user), 'backfill', {});
    expect(new Set(again.changes.map((c) => c.externalId))).toEqual(new Set(ids));
    expect(again.changes.length).toBe(ids.length);
    const seen = new Set(first.changes.map((c) => c.eventKey));
    expect(again.changes.filter((c) => !seen.has(c.eventKey))).toEqual([]);
    // The fresh token works.
    expect((await drain(connector, kit.context(user), 'pull', again.cursor)).changes).toEqual([]);
  });

  it('creates idempotently with a client-chosen id: the same key twice makes one event', async () => {
    const user = await kit.createUser('idem');
    const ctx = kit.context(user);
    const w = write(1, `key-${Date.now()}`);
    const [first] = unwrap(await connector.push(ctx, [w]));
    const [second] = unwrap(await connector.push(ctx, [w]));
    expect(second).toEqual(first);
    expect(first!.externalId).toMatch(/^[0-9a-v]{5,1024}$/);
    const events = await kit.state<
      { id: string; extendedProperties?: { private?: Record<string, string> } }[]
    >(user, 'calendar/events');
    expect(events).toHaveLength(1);
    expect(events[0]!.extendedProperties?.private).toEqual({
      synclineOrigin: 'syncline',
      synclineEntityId: w.entityId,
    });
    const inserts = (await kit.requests(user.email)).filter(
      (r) => r.method === 'POST' && r.path.startsWith('/calendar/v3/calendars/primary/events'),
    );
    expect(inserts.map((r) => r.status)).toEqual([200, 409]);
  });

  it('recognises its own echo by content hash, and a later user edit is not one', async () => {
    const user = await kit.createUser('echo');
    await seed(user, 3);
    const start = await drain(connector, kit.context(user), 'backfill', {});
    const [receipt] = unwrap(await connector.push(kit.context(user), [write(2, `echo-${Date.now()}`)]));
    const pulled = await drain(connector, kit.context(user), 'pull', start.cursor);
    const echo = pulled.changes.find((c) => c.externalId === receipt!.externalId)!;
    expect(contentHash(echo.fields ?? {})).toBe(receipt!.contentHash);
    expect(echo.providerVersion).toBe(receipt!.providerVersion);
    expect(echo.origin).toMatchObject({ synclineOrigin: 'syncline' });
    await kit.ui(user, 'PATCH', `calendar/events/${receipt!.externalId}`, { summary: 'Renamed by the user' });
    const after = await drain(connector, kit.context(user), 'pull', pulled.cursor);
    const edit = after.changes.find((c) => c.externalId === receipt!.externalId)!;
    expect(contentHash(edit.fields ?? {})).not.toBe(receipt!.contentHash);
  });

  it('patches with If-Match (stale etag → Conflict) and deletes idempotently', async () => {
    const user = await kit.createUser('patch');
    const ctx = kit.context(user);
    const [created] = unwrap(await connector.push(ctx, [write(3, `patch-${Date.now()}`)]));
    const update: PushWrite = {
      op: 'update',
      entityType: 'meeting',
      externalId: created!.externalId,
      idempotencyKey: `upd-${Date.now()}`,
      entityId: '00000000-0000-4000-8000-000000000001',
      fields: { title: 'Renamed by us' },
      expectedVersion: created!.providerVersion,
    };
    const [updated] = unwrap(await connector.push(ctx, [update]));
    expect(updated!.providerVersion).not.toBe(created!.providerVersion);
    const stale = await connector.push(ctx, [{ ...update, fields: { title: 'Again' } }]);
    expect(stale.ok ? 'ok' : stale.error.code).toBe('Conflict');
    // The 412 names the write and carries the event as it is now (read after the refusal).
    expect(stale.ok ? undefined : stale.error.failedKeys).toEqual([update.idempotencyKey]);
    expect(stale.ok ? undefined : stale.error.current).toEqual([
      expect.objectContaining({
        workspaceId: ctx.workspaceId,
        connectionId: ctx.connectionId,
        entityType: 'meeting',
        externalId: created!.externalId,
        op: 'upsert',
        providerVersion: updated!.providerVersion,
        fields: expect.objectContaining({ title: 'Renamed by us' }),
      }),
    ]);
    const del = { ...update, op: 'delete' as const, fields: {}, expectedVersion: undefined };
    unwrap(await connector.push(ctx, [del]));
    unwrap(await connector.push(ctx, [del])); // 410 deleted → already done
  });

  it('subscribes, verifies and parses notifications, and stops the channel', async () => {
    const user = await kit.createUser('watch');
    const receiver = await WebhookReceiver.start();
    try {
      const ctx = kit.context(user);
      const sub = unwrap(
        await connector.subscribe!(ctx, `${receiver.url}/webhooks/google-calendar`, 'tok-1'),
      );
      expect(sub.expiresAt.getTime()).toBeGreaterThan(Date.now());
      await seed(user, 1);
      const exists = await receiver.waitFor((r) => r.headers['x-goog-resource-state'] === 'exists');
      const secrets = {
        channels: [
          { id: 'other', token: 'x' },
          { id: sub.id, token: 'tok-1', resourceId: sub.resourceId! },
        ],
      };
      expect(connector.verifyWebhook(exists, secrets)).toEqual({ ok: true, value: undefined });
      const forged = { ...exists, headers: { ...exists.headers, 'x-goog-channel-token': 'tok-2' } };
      expect(connector.verifyWebhook(forged, secrets)).toMatchObject({
        ok: false,
        error: { code: 'Validation' },
      });
      const noToken = { ...exists, headers: { ...exists.headers, 'x-goog-channel-token': undefined } };
      expect(connector.verifyWebhook(noToken, secrets)).toMatchObject({
        ok: false,
        error: { code: 'Validation' },
      });
      const scope = { connectionId: ctx.connectionId, workspaceId: ctx.workspaceId };
      expect(unwrap(connector.parseWebhook(exists, scope)).kind).toBe('pull');
      const sync = receiver.received.find((r) => r.headers['x-goog-resource-state'] === 'sync')!;
      expect(unwrap(connector.parseWebhook(sync, scope)).kind).toBe('pull');
      unwrap(await connector.unsubscribe!(ctx, sub));
      unwrap(await connector.unsubscribe!(ctx, sub)); // already stopped: fine
    } finally {
      await receiver.close();
    }
  });

  it('retries injected 429s and 5xx within the budget and loses nothing', async () => {
    const user = await kit.createUser('faults', { rateLimitStatus: 429 });
    const ids = await seed(user, 11);
    await kit.fault({ kind: 'rate-limit', account: user.email, count: 2 });
    await kit.fault({ kind: 'server-error', account: user.email, count: 2 });
    const ctx = kit.context(user);
    const run = await drain(connector, ctx, 'backfill', {});
    expect(new Set(run.changes.map((c) => c.externalId))).toEqual(new Set(ids));
    // Four failures in a row: three retried inside the call, the fourth handed to the worker.
    expect(run.retried).toBeLessThanOrEqual(1);
    const statuses = (await kit.requests(user.email)).map((r) => r.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(2);
  });

  it('refreshes an expired access token once, and answers AuthRevoked when the grant is revoked', async () => {
    const user = await kit.createUser('auth');
    await seed(user, 2);
    await kit.control('POST', `/_emulator/google/users/${user.email}/expire-access-tokens`);
    const ctx: ConnectionContext = kit.context(user);
    expect(unwrap(await connector.backfill(ctx, {})).changes).toHaveLength(2);
    await kit.fault({ kind: 'revoke-token', account: user.email, count: 1 });
    const mark = (await kit.requests(user.email)).length;
    const res = await connector.backfill(kit.context(user), {});
    expect(res.ok ? 'ok' : res.error.code).toBe('AuthRevoked');
    const push = await connector.push(kit.context(user), [write(4, `rev-${Date.now()}`)]);
    expect(push.ok ? 'ok' : push.error.code).toBe('AuthRevoked');
    expect((await kit.requests(user.email)).length - mark).toBeLessThan(6);
  });
});
