import type { SourceChangeInput } from '@syncline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cursor } from '../contract/connector';
import { changeKeys, drain, unwrap } from '../contract/contract-suite';
import { GoogleTestKit, type GoogleUser } from '../google-common/testing/google-test-kit';
import { WebhookReceiver } from '../google-common/testing/webhook-receiver';
import { createGmailConnector } from './gmail.connector';

const connector = createGmailConnector({ pageSize: 3, retry: { baseDelayMs: 10 } });
let kit: GoogleTestKit;

async function seed(user: GoogleUser, count: number, from = 'Ann Lee <ann@example.com>'): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const mail = {
      from,
      to: [user.email],
      cc: [`cc${n}@example.com`],
      subject: `Hello ${n}`,
      text: `secret body ${n}`,
    };
    ids.push((await kit.ui<{ id: string }>(user, 'POST', 'gmail/messages', mail)).body.id);
  }
  return ids;
}

beforeAll(async () => {
  kit = await GoogleTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('gmail connector against the emulator', () => {
  it('backfills message metadata over pages (no bodies), bounded by the backfill query', async () => {
    const user = await kit.createUser('backfill');
    const ids = await seed(user, 8);
    const old = {
      from: 'old@example.com',
      to: [user.email],
      subject: 'Ancient',
      text: 'x',
      date: '2001-01-01T00:00:00Z',
    };
    await kit.ui(user, 'POST', 'gmail/messages', old);
    const run = await drain(connector, kit.context(user), 'backfill', {});
    expect(run.pages).toBeGreaterThan(2);
    expect(run.sawProgress).toBe(true);
    expect(run.changes.map((c) => c.externalId).sort()).toEqual([...ids].sort());
    expect(new Set(run.changes.map((c) => c.eventKey)).size).toBe(run.changes.length);
    expect(run.cursor.historyId).toEqual(expect.any(String));
    const one = run.changes.find((c) => c.externalId === ids[0])!;
    expect(one).toMatchObject({
      entityType: 'email_activity',
      op: 'upsert',
      fields: {
        subject: 'Hello 0',
        from: 'ann@example.com',
        fromName: 'Ann Lee',
        to: [user.email.toLowerCase()],
        cc: ['cc0@example.com'],
        direction: 'inbound',
        messageId: expect.stringMatching(/^<.+>$/),
      },
    });
    expect(JSON.stringify(run.changes)).not.toContain('secret body');
    // Nothing new: the pull is empty and done.
    const pulled = unwrap(await connector.pull(kit.context(user), run.cursor));
    expect(pulled).toMatchObject({ changes: [], done: true });
  });

  it('resumes from a saved cursor after a crash with no gap and no duplicate', async () => {
    const user = await kit.createUser('resume');
    const ids = await seed(user, 10);
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

  it('pulls new mail as upserts and deleted mail as tombstones; a redelivery has the same keys', async () => {
    const user = await kit.createUser('pull');
    const [, deleted] = await seed(user, 4);
    const backfill = await drain(connector, kit.context(user), 'backfill', {});
    const [added] = await seed(user, 1, `${user.email}`);
    await kit.ui(user, 'DELETE', `gmail/messages/${deleted}`);
    const pulled = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(pulled.changes.find((c) => c.externalId === added)).toMatchObject({
      op: 'upsert',
      fields: { direction: 'outbound' },
    });
    expect(pulled.changes.find((c) => c.externalId === deleted)).toMatchObject({ op: 'delete', fields: {} });
    const again = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(changeKeys(again.changes).sort()).toEqual(changeKeys(pulled.changes).sort());
  });

  it('answers CursorInvalid on 404 history, and a full resync gives the same set with no new keys', async () => {
    const user = await kit.createUser('resync');
    const ids = await seed(user, 7);
    const first = await drain(connector, kit.context(user), 'backfill', {});
    await kit.fault({ kind: 'invalidate-cursors', account: user.email, count: 1 });
    const refused = await connector.pull(kit.context(user), first.cursor);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('CursorInvalid');
    const again = await drain(connector, kit.context(user), 'backfill', {});
    expect(again.changes.map((c) => c.externalId).sort()).toEqual([...ids].sort());
    const seen = new Set(first.changes.map((c) => c.eventKey));
    expect(again.changes.filter((c) => !seen.has(c.eventKey))).toEqual([]);
    expect(unwrap(await connector.pull(kit.context(user), again.cursor)).changes).toEqual([]);
  });

  it('watches the mailbox, verifies the push by its token and parses it into a pull', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const user = await kit.createUser('push', {
        pushUrl: `${receiver.url}/webhooks/gmail?token=push-secret`,
      });
      const ctx = kit.context(user);
      const sub = unwrap(await connector.subscribe!(ctx, `${receiver.url}/webhooks/gmail`, 'push-secret'));
      expect(sub.expiresAt.getTime()).toBeGreaterThan(Date.now());
      await seed(user, 1);
      const push = await receiver.waitFor(() => true);
      expect(connector.verifyWebhook(push, { pushBearerToken: 'push-secret' })).toEqual({
        ok: true,
        value: undefined,
      });
      const wrong = connector.verifyWebhook(push, { pushBearerToken: 'other-secret' });
      expect(wrong).toMatchObject({ ok: false, error: { code: 'Validation' } });
      const bearer = {
        ...push,
        url: `${receiver.url}/webhooks/gmail`,
        headers: { authorization: 'Bearer push-secret' },
      };
      expect(connector.verifyWebhook(bearer, { pushBearerToken: 'push-secret' }).ok).toBe(true);
      expect(connector.verifyWebhook({ ...bearer, headers: {} }, { pushBearerToken: 'push-secret' }).ok).toBe(
        false,
      );
      const scope = { connectionId: ctx.connectionId, workspaceId: ctx.workspaceId };
      const parsed = unwrap(connector.parseWebhook(push, scope));
      expect(parsed).toMatchObject({ kind: 'pull', reason: expect.stringContaining(user.email) });
      expect(connector.parseWebhook({ ...push, rawBody: '{"message":{}}' }, scope)).toMatchObject({
        ok: false,
        error: { code: 'Validation' },
      });
      unwrap(await connector.unsubscribe!(ctx, sub));
    } finally {
      await receiver.close();
    }
  });

  it('refuses writes as Validation', async () => {
    const user = await kit.createUser('readonly');
    const res = await connector.push(kit.context(user), [
      { op: 'create', entityType: 'email_activity', fields: {}, idempotencyKey: 'k', entityId: 'e' },
    ]);
    expect(res.ok ? 'ok' : res.error.code).toBe('Validation');
  });

  it('retries injected 429s and 5xx within the budget and loses nothing', async () => {
    const user = await kit.createUser('faults', { rateLimitStatus: 429 });
    const ids = await seed(user, 7);
    await kit.fault({ kind: 'rate-limit', account: user.email, count: 2 });
    await kit.fault({ kind: 'server-error', account: user.email, count: 2 });
    const run = await drain(connector, kit.context(user), 'backfill', {});
    expect(new Set(run.changes.map((c) => c.externalId))).toEqual(new Set(ids));
    const statuses = (await kit.requests(user.email)).map((r) => r.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(2);
  });

  it('answers AuthRevoked when the grant is revoked, without looping', async () => {
    const user = await kit.createUser('revoked');
    await seed(user, 2);
    await kit.fault({ kind: 'revoke-token', account: user.email, count: 1 });
    const res = await connector.backfill(kit.context(user), {});
    expect(res.ok ? 'ok' : res.error.code).toBe('AuthRevoked');
    expect((await kit.requests(user.email)).length).toBeLessThan(4);
  });
});
