import type { SourceChangeInput } from '@syncline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cursor, WebhookRequest, WebhookSecrets } from '../contract/connector';
import { changeKeys, drain, unwrap } from '../contract/contract-suite';
import { createGmailConnector } from '../gmail';
import { GoogleTestKit } from '../google-common/testing/google-test-kit';
import { graphCall } from '../microsoft-common';
import { GraphNotificationReceiver } from '../microsoft-common/testing/graph-notification-receiver';
import {
  CountingBudget,
  MicrosoftTestKit,
  type MicrosoftUser,
} from '../microsoft-common/testing/microsoft-test-kit';
import { createMicrosoftMailConnector } from './microsoft-mail.connector';

const connector = createMicrosoftMailConnector({ pageSize: 3, retry: { baseDelayMs: 10 } });
let kit: MicrosoftTestKit;

/** A message as the control API answers it: Graph's view (REST id) and its immutable id. */
interface UiMessage {
  id: string;
  immutableId: string;
  internetMessageId: string;
}

const ANN = 'Ann Lee <ann@example.com>';

/** A mail received into the inbox (or another folder), as Outlook files it. */
async function receive(user: MicrosoftUser, n: number, extra: Record<string, unknown> = {}): Promise<string> {
  const mail = {
    from: ANN,
    to: [user.upn],
    cc: [`cc${n}@example.com`],
    subject: `Hello ${n}`,
    body: `secret body ${n}`,
    ...extra,
  };
  return (await kit.ui<UiMessage>(user, 'POST', 'mail/messages', mail)).body.immutableId;
}

/** A mail the owner sent (Sent Items: from the owner). */
const send = (user: MicrosoftUser, n: number) =>
  receive(user, n, { folder: 'sentitems', from: undefined, to: [`client${n}@example.com`], cc: [] });

const move = (user: MicrosoftUser, id: string, folder: string) =>
  kit.ui(user, 'POST', `mail/messages/${id}/move`, { folder });

/** Each change of `id` as `op labels`, in order. */
const story = (changes: readonly SourceChangeInput[], id: string): string[] =>
  changes
    .filter((c) => c.externalId === id)
    .map((c) =>
      c.op === 'delete' ? 'delete' : `upsert ${((c.fields?.labelIds ?? []) as string[]).join(',')}`,
    );

const last = (changes: readonly SourceChangeInput[], id: string) =>
  changes.filter((c) => c.externalId === id).at(-1);

beforeAll(async () => {
  kit = await MicrosoftTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('microsoft-mail connector against the Graph emulator', () => {
  it('backfills received and sent mail over pages, in the backfill window, without drafts or bodies', async () => {
    const user = await kit.createUser('backfill', { displayName: 'Dana Scully' });
    const received: string[] = [];
    for (let n = 0; n < 5; n++) received.push(await receive(user, n));
    const sent = [await send(user, 10), await send(user, 11)];
    await receive(user, 20, { folder: 'drafts', from: undefined, to: ['draft@example.com'] });
    await receive(user, 21, { folder: 'archive' });
    await receive(user, 22, { sentAt: '2001-01-01T00:00:00Z' });
    // The folders are read at once: the first call brings a page of each (3 of the 5 received,
    // the 2 sent), the next the rest of the inbox.
    const budget = new CountingBudget();
    const first = unwrap(await connector.backfill(kit.context(user, budget), {}));
    expect(first.done).toBe(false);
    expect(first.changes.filter((c) => received.includes(c.externalId))).toHaveLength(3);
    expect(first.changes.filter((c) => sent.includes(c.externalId))).toHaveLength(2);
    const rest = await drain(connector, kit.context(user, budget), 'backfill', first.cursor);
    expect(rest.pages).toBe(1);
    expect(first.progress?.seen).toBe(5);
    const run = { ...rest, changes: [...first.changes, ...rest.changes] };
    expect(run.sawProgress).toBe(true);
    expect(run.changes.map((c) => c.externalId).sort()).toEqual([...received, ...sent].sort());
    expect(new Set(run.changes.map((c) => c.eventKey)).size).toBe(run.changes.length);
    expect(last(run.changes, received[0]!)).toMatchObject({
      entityType: 'email_activity',
      op: 'upsert',
      fields: {
        subject: 'Hello 0',
        from: 'ann@example.com',
        fromName: 'Ann Lee',
        to: [user.upn.toLowerCase()],
        cc: ['cc0@example.com'],
        labelIds: ['INBOX', 'UNREAD'],
        direction: 'inbound',
        messageId: expect.stringMatching(/^<[^<>]+@example\.com>$/),
      },
    });
    expect(last(run.changes, sent[0]!)).toMatchObject({
      fields: {
        from: user.upn.toLowerCase(),
        fromName: 'Dana Scully',
        to: ['client10@example.com'],
        labelIds: ['SENT'],
        direction: 'outbound',
      },
    });
    expect(JSON.stringify(run.changes)).not.toContain('secret body');
    // Both folders' rounds began with our $select and the window; every request took budget.
    const requests = await kit.requests(user);
    const firstCalls = requests.filter((r) =>
      /\/messages\/delta\?(?!.*token=)/.test(decodeURIComponent(r.path)),
    );
    expect(firstCalls.map((r) => r.path.split('?')[0])).toEqual([
      '/v1.0/me/mailFolders/inbox/messages/delta',
      '/v1.0/me/mailFolders/sentitems/messages/delta',
    ]);
    for (const call of firstCalls) {
      expect(decodeURIComponent(call.path)).toMatch(/\$select=changeKey,.*internetMessageId/);
      expect(decodeURIComponent(call.path)).toMatch(/\$filter=receivedDateTime ge \d{4}-\d\d-\d\dT/);
    }
    expect(budget.acquired).toBe(requests.length);
    // Nothing new: one empty page, done, that keeps only deltaLinks.
    const pulled = unwrap(await connector.pull(kit.context(user), run.cursor));
    expect(pulled).toMatchObject({ changes: [], done: true });
    expect(pulled.cursor).toMatchObject({ inboxNext: null, sentitemsNext: null });
    expect(String(pulled.cursor.inboxDelta)).toContain('$deltatoken=');
  });

  it('tells sent from received by the folder and by the owner as sender', async () => {
    const user = await kit.createUser('direction');
    const toSelf = await receive(user, 1, { from: user.upn, to: [user.upn] });
    const fromClient = await receive(user, 2);
    const sent = await send(user, 3);
    const run = await drain(connector, kit.context(user), 'backfill', {});
    expect(last(run.changes, toSelf)?.fields).toMatchObject({
      labelIds: ['INBOX', 'SENT', 'UNREAD'],
      direction: 'outbound',
    });
    expect(last(run.changes, fromClient)?.fields).toMatchObject({ direction: 'inbound' });
    expect(last(run.changes, sent)?.fields).toMatchObject({ direction: 'outbound' });
    // The owner's address is read once, at the start of the backfill.
    expect((await kit.requests(user)).filter((r) => r.path.startsWith('/v1.0/me?'))).toHaveLength(1);
  });

  it('follows a message moved between folders under its immutable id, and tombstones it only when deleted', async () => {
    const user = await kit.createUser('moves');
    const toSent = await receive(user, 1);
    const toArchive = await receive(user, 2);
    const toInbox = await send(user, 3);
    const toTrash = await receive(user, 4);
    const gone = await receive(user, 5);
    const backfill = await drain(connector, kit.context(user), 'backfill', {});
    expect(backfill.changes).toHaveLength(5);

    await move(user, toSent, 'sentitems');
    await move(user, toArchive, 'archive');
    await move(user, toInbox, 'inbox');
    await move(user, toTrash, 'deleteditems');
    await kit.ui(user, 'DELETE', `mail/messages/${gone}`);
    const pulled = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    // One chain reports a message leaving, the other its arrival: the same version, never a delete.
    expect(new Set(story(pulled.changes, toSent))).toEqual(new Set(['upsert SENT,UNREAD']));
    expect(story(pulled.changes, toArchive)).toEqual(['upsert UNREAD']);
    expect(new Set(story(pulled.changes, toInbox))).toEqual(new Set(['upsert INBOX,SENT']));
    expect(story(pulled.changes, toTrash)).toEqual(['delete']);
    expect(story(pulled.changes, gone)).toEqual(['delete']);
    const keysOf = (id: string) =>
      new Set(pulled.changes.filter((c) => c.externalId === id).map((c) => c.eventKey));
    expect(keysOf(toSent).size).toBe(1);
    expect(keysOf(toInbox).size).toBe(1);
    // A redelivery has the same keys.
    const again = await drain(connector, kit.context(user), 'pull', backfill.cursor);
    expect(new Set(changeKeys(again.changes))).toEqual(new Set(changeKeys(pulled.changes)));

    // Restored from Deleted Items and deleted again: two tombstones, told apart.
    await move(user, toTrash, 'inbox');
    await move(user, toArchive, 'inbox');
    const restored = await drain(connector, kit.context(user), 'pull', pulled.cursor);
    expect(story(restored.changes, toTrash)).toEqual(['upsert INBOX,UNREAD']);
    expect(story(restored.changes, toArchive)).toEqual(['upsert INBOX,UNREAD']);
    await move(user, toTrash, 'deleteditems');
    const deletedAgain = await drain(connector, kit.context(user), 'pull', restored.cursor);
    expect(story(deletedAgain.changes, toTrash)).toEqual(['delete']);
    expect(last(deletedAgain.changes, toTrash)!.eventKey).not.toBe(last(pulled.changes, toTrash)!.eventKey);
  });

  it('answers CursorInvalid when Graph evicted the sync state (400 or 410), and a backfill then brings no new key', async () => {
    for (const eviction of [{ status: 400 }, { status: 410, restart: true }]) {
      const user = await kit.createUser('resync');
      const ids = [await receive(user, 1), await receive(user, 2), await send(user, 3), await send(user, 4)];
      const first = await drain(connector, kit.context(user), 'backfill', {});
      await kit.control(
        'POST',
        `/_emulator/microsoft/users/${encodeURIComponent(user.upn)}/mail/invalidate-delta`,
        eviction,
      );
      const refused = await connector.pull(kit.context(user), first.cursor);
      expect(refused.ok ? 'ok' : refused.error.code).toBe('CursorInvalid');
      expect(refused.ok ? '' : refused.error.message).toContain('syncStateNotFound');
      const again = await drain(connector, kit.context(user), 'backfill', {});
      expect(again.changes.map((c) => c.externalId).sort()).toEqual([...ids].sort());
      const seen = new Set(first.changes.map((c) => c.eventKey));
      expect(again.changes.filter((c) => !seen.has(c.eventKey))).toEqual([]);
      expect(unwrap(await connector.pull(kit.context(user), again.cursor)).changes).toEqual([]);
    }
  });

  it('refuses to pull without a deltaLink for each folder', async () => {
    const user = await kit.createUser('no-delta');
    for (let n = 0; n < 4; n++) await receive(user, n);
    const firstPage = unwrap(await connector.backfill(kit.context(user), {}));
    expect(firstPage.done).toBe(false);
    for (const cursor of [{}, { v: 0 }, firstPage.cursor] as Cursor[]) {
      const res = await connector.pull(kit.context(user), cursor);
      expect(res.ok ? 'ok' : res.error.code).toBe('CursorInvalid');
    }
    // The unfinished backfill resumes from where it stopped.
    const rest = await drain(connector, kit.context(user), 'backfill', firstPage.cursor);
    expect([...firstPage.changes, ...rest.changes]).toHaveLength(4);
  });

  it('goes on from a cursor stored by the version that read the folders in turn', async () => {
    const user = await kit.createUser('cursor-v1');
    await receive(user, 1);
    const backfilled = await drain(connector, kit.context(user), 'backfill', {});
    const sentLater = await send(user, 2);
    const receivedLater = await receive(user, 3);
    // Version 1, stored mid-run: the inbox caught up (`at` past it), Sent Items still to read.
    const { inboxCaughtUp: _i, sentitemsCaughtUp: _s, ...links } = backfilled.cursor;
    const v1: Cursor = { ...links, v: 1, at: 1 };
    const pulled = await drain(connector, kit.context(user), 'pull', v1);
    expect(pulled.changes.map((c) => c.externalId)).toEqual([sentLater]);
    // The next run reads both folders again.
    const next = await drain(connector, kit.context(user), 'pull', pulled.cursor);
    expect(next.changes.map((c) => c.externalId)).toEqual([receivedLater]);
  });

  it('reports a meeting request as the mail it is', async () => {
    const user = await kit.createUser('meeting');
    const id = await receive(user, 1, {
      subject: 'Quarterly review',
      meetingRequest: { start: '2030-03-01T09:00:00Z', end: '2030-03-01T10:00:00Z', location: 'Room 4' },
    });
    const plain = await receive(user, 2);
    const graph = unwrap(
      await graphCall(kit.context(user), (c) =>
        c.api(`/me/messages/${id}`).header('Prefer', 'IdType="ImmutableId"').select('subject').get(),
      ),
    ) as Record<string, unknown>;
    expect(graph['@odata.type']).toBe('#microsoft.graph.eventMessage');
    const run = await drain(connector, kit.context(user), 'backfill', {});
    const meeting = last(run.changes, id)!;
    expect(meeting).toMatchObject({
      entityType: 'email_activity',
      op: 'upsert',
      fields: {
        subject: 'Quarterly review',
        from: 'ann@example.com',
        direction: 'inbound',
        labelIds: ['INBOX', 'UNREAD'],
      },
    });
    expect(Object.keys(meeting.fields ?? {})).toEqual(Object.keys(last(run.changes, plain)!.fields ?? {}));
  });

  it('reports the same Message-ID and fields as Gmail for one mail both mailboxes received', async () => {
    const google = await GoogleTestKit.start();
    try {
      const outlookUser = await kit.createUser('parity');
      const gmailUser = await google.createUser('parity');
      const messageId = '<CAF=Parity.42@mail.example.com>';
      const sentAt = '2030-02-03T04:05:06Z';
      const to = [gmailUser.email, outlookUser.upn];
      const cc = ['Carol <carol@example.com>'];
      await google.ui(gmailUser, 'POST', 'gmail/messages', {
        from: ANN,
        to,
        cc,
        subject: 'Proposal',
        date: sentAt,
        messageId,
        text: 'x',
      });
      await receive(outlookUser, 1, { to, cc, subject: 'Proposal', sentAt, internetMessageId: messageId });
      const gmail = await drain(
        createGmailConnector({ backfillQuery: '' }),
        google.context(gmailUser),
        'backfill',
        {},
      );
      const outlook = await drain(
        createMicrosoftMailConnector({ backfillDays: 0 }),
        kit.context(outlookUser),
        'backfill',
        {},
      );
      expect(gmail.changes).toHaveLength(1);
      expect(outlook.changes).toHaveLength(1);
      const { threadId: gmailThread, ...gmailFields } = gmail.changes[0]!.fields ?? {};
      const { threadId: outlookThread, ...outlookFields } = outlook.changes[0]!.fields ?? {};
      expect(outlookFields).toEqual(gmailFields);
      expect(outlookFields.messageId).toBe(messageId);
      expect(Object.keys(outlook.changes[0]!.fields ?? {})).toEqual(
        Object.keys(gmail.changes[0]!.fields ?? {}),
      );
      expect([typeof gmailThread, typeof outlookThread]).toEqual(['string', 'string']);
    } finally {
      await google.close();
    }
  });

  it('subscribes to every folder, verifies notifications by subscription and clientState, and parses them into pulls', async () => {
    const receiver = await GraphNotificationReceiver.start();
    try {
      const user = await kit.createUser('webhook');
      const ctx = kit.context(user);
      const url = `${receiver.url}/microsoft-mail`;
      const before = Date.now();
      const sub = unwrap(await connector.subscribe!(ctx, url, 'client-state-1'));
      // Graph checked both URLs before it made the subscription.
      expect(receiver.validations).toHaveLength(2);
      expect(sub.expiresAt.getTime()).toBeGreaterThan(before + 4_100 * 60_000);
      expect(sub.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 4_230 * 60_000);
      const listed = await kit.control<{
        subscriptions: { id: string; resource: string; changeType: string }[];
      }>('GET', '/_emulator/microsoft/subscriptions');
      expect(listed.body.subscriptions.find((s) => s.id === sub.id)).toMatchObject({
        resource: '/me/messages',
        changeType: 'created,updated,deleted',
      });

      // A mail sent lands in Sent Items: the subscription covers it too, under its immutable id.
      const sentId = await send(user, 1);
      const change = await receiver.waitFor((r) => r.rawBody.includes(sentId));
      const secrets = { channels: [{ id: sub.id, token: 'client-state-1' }] };
      expect(connector.verifyWebhook(change, secrets)).toEqual({ ok: true, value: undefined });
      const refused = (request: WebhookRequest, s: WebhookSecrets = secrets) => {
        const res = connector.verifyWebhook(request, s);
        return res.ok ? 'verified' : res.error.code;
      };
      expect(refused(change, { channels: [{ id: sub.id, token: 'another-state' }] })).toBe('Validation');
      expect(refused(change, { channels: [{ id: 'another-subscription', token: 'client-state-1' }] })).toBe(
        'Validation',
      );
      expect(refused(change, {})).toBe('Validation');
      expect(refused({ ...change, rawBody: change.rawBody.replaceAll('client-state-1', 'forged') })).toBe(
        'Validation',
      );
      expect(refused({ ...change, rawBody: 'not json' })).toBe('Validation');
      const scope = { connectionId: ctx.connectionId, workspaceId: ctx.workspaceId };
      expect(unwrap(connector.parseWebhook(change, scope))).toEqual({
        kind: 'pull',
        reason: expect.stringContaining('outlook mail'),
      });

      // Lifecycle events, raised as Graph raises them, ask for a pull and for the subscription.
      const lifecycle = async (event: string) => {
        await kit.control('POST', `/_emulator/microsoft/subscriptions/${sub.id}/lifecycle`, { event });
        const request = await receiver.waitFor((r) => r.rawBody.includes(`"lifecycleEvent":"${event}"`));
        expect(connector.verifyWebhook(request, secrets).ok).toBe(true);
        return unwrap(connector.parseWebhook(request, scope));
      };
      expect(await lifecycle('reauthorizationRequired')).toMatchObject({
        kind: 'pull',
        subscription: 'reauthorize',
      });
      const missed = await lifecycle('missed');
      expect(missed.kind).toBe('pull');
      expect('subscription' in missed).toBe(false);
      expect(await lifecycle('subscriptionRemoved')).toMatchObject({
        kind: 'pull',
        subscription: 'recreate',
      });

      // Gone already (subscriptionRemoved): unsubscribing is done all the same.
      unwrap(await connector.unsubscribe!(ctx, sub));
      const second = unwrap(await connector.subscribe!(ctx, url, 'client-state-2'));
      unwrap(await connector.unsubscribe!(ctx, second));
      const after = await kit.control<{ subscriptions: { id: string }[] }>(
        'GET',
        '/_emulator/microsoft/subscriptions',
      );
      expect(after.body.subscriptions.map((s) => s.id)).not.toContain(second.id);
      const deletes = (await kit.requests(user)).filter((r) => r.method === 'DELETE');
      expect(deletes.map((r) => r.status)).toEqual([404, 204]);
    } finally {
      await receiver.close();
    }
  });

  it('asks Graph for the subscription lifetime it is configured with', async () => {
    const receiver = await GraphNotificationReceiver.start();
    try {
      const user = await kit.createUser('lifetime');
      const short = createMicrosoftMailConnector({ subscriptionMinutes: 60 });
      const before = Date.now();
      const sub = unwrap(await short.subscribe!(kit.context(user), `${receiver.url}/x`, 'state'));
      expect(sub.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 60 * 60_000 - 1_000);
      expect(sub.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
      const tooLong = await createMicrosoftMailConnector({ subscriptionMinutes: 5_000 }).subscribe!(
        kit.context(user),
        `${receiver.url}/x`,
        'state',
      );
      expect(tooLong.ok ? 'ok' : tooLong.error.code).toBe('Validation');
    } finally {
      await receiver.close();
    }
  });

  it('refuses writes as Validation', async () => {
    const user = await kit.createUser('readonly');
    expect(connector.writable).toEqual([]);
    const res = await connector.push(kit.context(user), [
      { op: 'create', entityType: 'email_activity', fields: {}, idempotencyKey: 'k', entityId: 'e' },
    ]);
    expect(res.ok ? 'ok' : res.error.code).toBe('Validation');
    expect(await kit.requests(user)).toEqual([]);
  });
});
