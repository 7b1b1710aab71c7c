import type { gmail_v1 } from 'googleapis/build/src/apis/gmail';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PUSH_SERVICE_ACCOUNT } from './gmail-watch';
import { expectSchema } from './testing/expect-schema';
import { apiError, type CreatedUser, GoogleHarness } from './testing/google-harness';
import { PushReceiver } from './testing/push-receiver';

let google: GoogleHarness;
let receiver: PushReceiver;
let user: CreatedUser;
let gmail: gmail_v1.Gmail;

const mail = (n: number) => ({
  from: `Lee ${n} <lee${n}@example.com>`,
  to: ['dana@example.com'],
  cc: n % 2 === 0 ? ['sam@example.com'] : [],
  subject: `Quarterly review ${n}`,
  date: new Date(Date.UTC(2030, 0, 1, 9, n)).toISOString(),
  messageId: `<msg-${n}@example.com>`,
  text: `Hello Dana, this is message ${n}.`,
});

const deliver = (n: number) =>
  google.control<{ id: string }>('POST', `/_emulator/google/users/${user.email}/ui/gmail/messages`, mail(n));

beforeAll(async () => {
  google = await GoogleHarness.start();
  receiver = await PushReceiver.start();
});

afterAll(async () => {
  await google.close();
  await receiver.close();
});

beforeEach(async () => {
  await google.control('POST', '/_emulator/reset');
  receiver.clear();
  user = await google.createUser('dana@example.com', { pushUrl: `${receiver.url}/pubsub` });
  gmail = google.gmail(google.oauthClient(user));
});

describe('messages', () => {
  it('lists in pages and gets metadata with the requested headers in their own case', async () => {
    for (let n = 0; n < 7; n++) await deliver(n);
    const profile = await gmail.users.getProfile({ userId: 'me' });
    expectSchema('gmail', 'Profile', profile.data);
    expect(profile.data).toMatchObject({ emailAddress: user.email, messagesTotal: 7, threadsTotal: 7 });

    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await gmail.users.messages.list({
        userId: 'me',
        maxResults: 3,
        ...(pageToken ? { pageToken } : {}),
      });
      expectSchema('gmail', 'ListMessagesResponse', page.data);
      expect(page.data.resultSizeEstimate).toBe(7);
      ids.push(...(page.data.messages ?? []).map((m) => m.id!));
      pageToken = page.data.nextPageToken ?? undefined;
    } while (pageToken);
    expect(ids).toHaveLength(7);
    expect(new Set(ids).size).toBe(7);

    const newest = await gmail.users.messages.get({
      userId: 'me',
      id: ids[0]!,
      format: 'metadata',
      metadataHeaders: ['From', 'Subject', 'message-id', 'Cc'],
    });
    expectSchema('gmail', 'Message', newest.data);
    expect(newest.data.internalDate).toBe(String(Date.UTC(2030, 0, 1, 9, 6)));
    expect(newest.data.labelIds).toEqual(['INBOX', 'UNREAD']);
    expect(newest.data.snippet).toBe('Hello Dana, this is message 6.');
    expect(newest.data.payload?.headers).toEqual([
      { name: 'Message-ID', value: '<msg-6@example.com>' },
      { name: 'Subject', value: 'Quarterly review 6' },
      { name: 'From', value: 'Lee 6 <lee6@example.com>' },
      { name: 'Cc', value: 'sam@example.com' },
    ]);

    const searched = await gmail.users.messages.list({ userId: 'me', q: 'from:lee3@example.com' });
    expect(searched.data.messages?.map((m) => m.id)).toHaveLength(1);
  });
});

describe('history.list', () => {
  it('pages through history with increasing, non-contiguous ids and filters by type', async () => {
    const start = (await gmail.users.getProfile({ userId: 'me' })).data.historyId!;
    const nothing = await gmail.users.history.list({ userId: 'me', startHistoryId: start });
    expectSchema('gmail', 'ListHistoryResponse', nothing.data);
    expect(nothing.data).toEqual({ historyId: start });

    const delivered: string[] = [];
    for (let n = 0; n < 5; n++) delivered.push((await deliver(n)).body.id);
    await google.control(
      'POST',
      `/_emulator/google/users/${user.email}/ui/gmail/messages/${delivered[0]}/labels`,
      {
        remove: ['UNREAD'],
      },
    );

    const records: gmail_v1.Schema$History[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await gmail.users.history.list({
        userId: 'me',
        startHistoryId: start,
        maxResults: 2,
        ...(pageToken ? { pageToken } : {}),
      });
      expectSchema('gmail', 'ListHistoryResponse', page.data);
      records.push(...(page.data.history ?? []));
      pageToken = page.data.nextPageToken ?? undefined;
      pages++;
    } while (pageToken);
    expect(pages).toBe(3);
    expect(
      records.map((r) => r.messagesAdded?.[0]?.message?.id ?? r.labelsRemoved?.[0]?.message?.id),
    ).toEqual([...delivered, delivered[0]]);
    const historyIds = records.map((r) => Number(r.id));
    for (let i = 1; i < historyIds.length; i++)
      expect(historyIds[i]! - historyIds[i - 1]!).toBeGreaterThan(1);
    expect(records[5]?.labelsRemoved?.[0]?.labelIds).toEqual(['UNREAD']);

    const added = await gmail.users.history.list({
      userId: 'me',
      startHistoryId: start,
      historyTypes: ['labelRemoved', 'labelAdded'],
    });
    expect(added.data.history?.map((r) => r.id)).toEqual([String(historyIds[5])]);
  });

  it('answers 404 for a startHistoryId older than the history kept', async () => {
    const start = (await gmail.users.getProfile({ userId: 'me' })).data.historyId!;
    await deliver(1);
    await google.fault({ kind: 'invalidate-cursors', account: user.email, count: 1 });
    const tooOld = await apiError(gmail.users.history.list({ userId: 'me', startHistoryId: start }));
    expect(tooOld).toMatchObject({
      status: 404,
      data: { error: { code: 404, errors: [{ reason: 'notFound' }] } },
    });

    // A full sync restarts from the profile's history id, which works again.
    const fresh = (await gmail.users.getProfile({ userId: 'me' })).data.historyId!;
    expect(Number(fresh)).toBeGreaterThan(Number(start));
    await deliver(2);
    const resumed = await gmail.users.history.list({ userId: 'me', startHistoryId: fresh });
    expect(resumed.data.history).toHaveLength(1);
  });
});

describe('users.watch', () => {
  it('pushes Pub/Sub bodies with a verifiable bearer token, at most once a second', async () => {
    const watch = await gmail.users.watch({
      userId: 'me',
      requestBody: { topicName: 'projects/syncline/topics/gmail', labelIds: ['INBOX'] },
    });
    expectSchema('gmail', 'WatchResponse', watch.data);
    expect(Number(watch.data.expiration)).toBeGreaterThan(google.ctx.now());

    await deliver(1);
    const [push] = await receiver.waitFor(1);
    expect(push?.path).toBe('/pubsub');
    expect(push?.headers['content-type']).toBe('application/json');
    const body = JSON.parse(push!.body) as {
      message: { data: string; messageId: string; publishTime: string };
      subscription: string;
    };
    expect(body.subscription).toBe('projects/syncline/subscriptions/gmail-push');
    expect(body.message.messageId).toMatch(/^\d+$/);
    const data = JSON.parse(Buffer.from(body.message.data, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    const profile = await gmail.users.getProfile({ userId: 'me' });
    expect(data).toEqual({ emailAddress: user.email, historyId: Number(profile.data.historyId) });

    const bearer = String(push?.headers.authorization).replace(/^Bearer /, '');
    const verifier = google.oauthClient(user);
    const ticket = await verifier.verifyIdToken({ idToken: bearer, audience: `${receiver.url}/pubsub` });
    expect(ticket.getPayload()).toMatchObject({ email: PUSH_SERVICE_ACCOUNT, email_verified: true });

    // Three more within the second: one push, a second later, with the latest history id.
    const firstAt = Date.now();
    for (let n = 2; n < 5; n++) await deliver(n);
    const [, coalesced] = await receiver.waitFor(2, 3000);
    expect(Date.now() - firstAt).toBeGreaterThan(500);
    const latest = (await gmail.users.getProfile({ userId: 'me' })).data.historyId;
    const coalescedData = JSON.parse(
      Buffer.from(
        (JSON.parse(coalesced!.body) as { message: { data: string } }).message.data,
        'base64url',
      ).toString(),
    ) as { historyId: number };
    expect(String(coalescedData.historyId)).toBe(latest);
    expect(await receiver.settle(300)).toHaveLength(2);

    await gmail.users.stop({ userId: 'me' });
    await deliver(9);
    expect(await receiver.settle(300)).toHaveLength(2);
  });
});
