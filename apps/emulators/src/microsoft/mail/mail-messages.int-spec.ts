import { type Client, ResponseType } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphRefusal, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;

const ui = () => `/_emulator/microsoft/users/${dana.upn}/ui/mail/messages`;
/** Well-formed ids nobody has. */
const UNKNOWN_MESSAGE = `AAMkAD${'A'.repeat(44)}`;
const UNKNOWN_FOLDER = `AQMkAD${'A'.repeat(44)}`;

async function deliver(body: Json): Promise<Json> {
  const mail = await ms.expectControl<Json>(201, 'POST', ui(), body);
  expectGraph('message', mail);
  return mail;
}

async function get(path: string, prefer?: string): Promise<Json> {
  const request = graph.api(path);
  const body = (await (prefer ? request.header('Prefer', prefer) : request).get()) as Json;
  expectGraph('message', body);
  return body;
}

beforeAll(async () => {
  ms = await MicrosoftHarness.start();
});

afterAll(async () => {
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
  dana = await ms.account('dana@contoso.example');
  graph = dana.client;
});

describe('mail folders', () => {
  it('lists the well-known folders, each also reachable by its well-known name, with counts', async () => {
    await deliver({ from: 'ada@example.com', subject: 'Unread' });
    await deliver({ from: 'ada@example.com', subject: 'Read', isRead: true });
    const list = (await graph.api('/me/mailFolders').get()) as Json;
    expectGraph('mailFolderCollectionResponse', list);
    const folders = list.value as Json[];
    expect(folders.map((f) => f.displayName)).toEqual([
      'Inbox',
      'Sent Items',
      'Drafts',
      'Deleted Items',
      'Archive',
    ]);
    expect(new Set(folders.map((f) => f.parentFolderId)).size).toBe(1);

    for (const [name, displayName] of [
      ['inbox', 'Inbox'],
      ['SentItems', 'Sent Items'],
      ['deleteditems', 'Deleted Items'],
    ]) {
      const folder = (await graph.api(`/me/mailFolders/${name}`).get()) as Json;
      expectGraph('mailFolder', folder);
      expect(folder.id).toBe(folders.find((f) => f.displayName === displayName)!.id);
    }
    const inbox = (await graph.api('/me/mailFolders/inbox').get()) as Json;
    expect(inbox).toMatchObject({ totalItemCount: 2, unreadItemCount: 1, childFolderCount: 0 });
    const byId = (await graph.api(`/me/mailFolders/${inbox.id}`).get()) as Json;
    expect(byId.displayName).toBe('Inbox');

    expect(await graphRefusal(graph.api(`/me/mailFolders/${UNKNOWN_FOLDER}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    expect(await graphRefusal(graph.api('/me/mailFolders/postbox').get())).toMatchObject({
      status: 400,
      code: 'ErrorInvalidIdMalformed',
    });
  });
});

describe('messages', () => {
  it('returns a received mail with every property Graph gives, valid against the schema', async () => {
    const sent = await deliver({
      from: { name: 'Ada Lovelace', address: 'ada@example.com' },
      to: ['Dana <dana@contoso.example>', 'bob@contoso.example'],
      cc: 'carol@example.com',
      subject: 'Engine notes',
      body: 'First line\nsecond line',
      sentAt: '2030-05-01T09:59:58Z',
      receivedAt: '2030-05-01T10:00:00Z',
      categories: ['Blue category'],
      importance: 'high',
    });
    const mail = await get(`/me/messages/${sent.id}`);
    const inbox = (await graph.api('/me/mailFolders/inbox').get()) as Json;
    expect(mail).toMatchObject({
      id: sent.id,
      subject: 'Engine notes',
      bodyPreview: 'First line second line',
      receivedDateTime: '2030-05-01T10:00:00Z',
      sentDateTime: '2030-05-01T09:59:58Z',
      isRead: false,
      isDraft: false,
      hasAttachments: false,
      importance: 'high',
      categories: ['Blue category'],
      parentFolderId: inbox.id,
      from: { emailAddress: { name: 'Ada Lovelace', address: 'ada@example.com' } },
      sender: { emailAddress: { name: 'Ada Lovelace', address: 'ada@example.com' } },
      toRecipients: [
        { emailAddress: { name: 'Dana', address: 'dana@contoso.example' } },
        { emailAddress: { name: 'bob@contoso.example', address: 'bob@contoso.example' } },
      ],
      ccRecipients: [{ emailAddress: { name: 'carol@example.com', address: 'carol@example.com' } }],
      bccRecipients: [],
      flag: { flagStatus: 'notFlagged' },
    });
    expect(mail['@odata.etag']).toBe(`W/"${mail.changeKey}"`);
    expect(mail.internetMessageId).toMatch(/^<[0-9A-F]+@example\.com>$/);
    expect(mail.conversationId).toMatch(/^AAQkAD/);
    expect(Buffer.from(String(mail.conversationIndex), 'base64')).toHaveLength(22);
    expect(String(mail.webLink)).toContain(encodeURIComponent(String(mail.id)));
    expect((mail.body as Json).contentType).toBe('html');
    expect((mail.body as Json).content).toContain('First line<br>');
    expect('@odata.type' in mail).toBe(false);

    const raw = (await graph
      .api(`/me/messages/${sent.id}`)
      .header('Prefer', 'outlook.body-content-type="text"')
      .responseType(ResponseType.RAW)
      .get()) as Response;
    expect(raw.headers.get('preference-applied')).toBe('outlook.body-content-type="text"');
    expect(((await raw.json()) as Json).body).toEqual({
      contentType: 'text',
      content: 'First line\nsecond line',
    });

    const selected = await get(`/me/messages/${sent.id}?$select=subject,internetMessageId`);
    expect(Object.keys(selected).sort()).toEqual([
      '@odata.context',
      '@odata.etag',
      'id',
      'internetMessageId',
      'subject',
    ]);
    expect(await graphRefusal(graph.api(`/me/messages/${sent.id}?$select=colour`).get())).toMatchObject({
      status: 400,
    });
  });

  it('threads a reply into its conversation, and files a sent mail from the owner in Sent Items', async () => {
    const first = await deliver({
      from: 'ada@example.com',
      subject: 'Lunch?',
      internetMessageId: '<lunch-1@example.com>',
    });
    const reply = await deliver({
      folder: 'sentitems',
      to: 'ada@example.com',
      subject: 'RE: Lunch?',
      conversationId: first.conversationId,
    });
    expect(reply).toMatchObject({
      conversationId: first.conversationId,
      isRead: true,
      from: { emailAddress: { name: 'dana', address: 'dana@contoso.example' } },
      toRecipients: [{ emailAddress: { name: 'ada@example.com', address: 'ada@example.com' } }],
    });
    expect(first.internetMessageId).toBe('<lunch-1@example.com>');
    const rootIndex = Buffer.from(String(first.conversationIndex), 'base64');
    const replyIndex = Buffer.from(String(reply.conversationIndex), 'base64');
    expect(replyIndex.subarray(0, 22)).toEqual(rootIndex);
    expect(replyIndex).toHaveLength(27);
    const sentItems = (await graph.api('/me/mailFolders/sentitems/messages').get()) as Json;
    expectGraph('messageCollectionResponse', sentItems);
    expect((sentItems.value as Json[]).map((m) => m.subject)).toEqual(['RE: Lunch?']);

    const draft = await deliver({ folder: 'drafts', subject: 'Half written' });
    expect(draft).toMatchObject({ isDraft: true, sentDateTime: null });
  });

  it('pages a folder by $top, newest first, following nextLink', async () => {
    for (const day of [1, 2, 3, 4, 5])
      await deliver({
        from: 'ada@example.com',
        subject: `Day ${day}`,
        receivedAt: `2030-06-0${day}T08:00:00Z`,
      });
    const subjects: unknown[] = [];
    let url = '/me/mailFolders/inbox/messages?$top=2&$select=subject,receivedDateTime';
    let pages = 0;
    for (;;) {
      const page = (await graph.api(url).get()) as Json;
      expectGraph('messageCollectionResponse', page);
      pages++;
      subjects.push(...(page.value as Json[]).map((m) => m.subject));
      if (typeof page['@odata.nextLink'] !== 'string') break;
      expect(page['@odata.nextLink']).toMatch(
        /^https:\/\/.*\/v1\.0\/me\/mailFolders\/inbox\/messages\?\$top=2&\$skip=\d+/,
      );
      url = page['@odata.nextLink'];
    }
    expect(pages).toBe(3);
    expect(subjects).toEqual(['Day 5', 'Day 4', 'Day 3', 'Day 2', 'Day 1']);
    const all = (await graph.api('/me/messages').top(1).get()) as Json;
    expect((all.value as Json[]).map((m) => m.subject)).toEqual(['Day 5']);
  });

  it('gives a meeting request as an eventMessage in the inbox and in its delta', async () => {
    const invite = await deliver({
      from: 'Ada <ada@example.com>',
      subject: 'Design review',
      meetingRequest: { start: '2030-07-01T13:00:00Z', end: '2030-07-01T14:00:00Z', location: 'Room 4' },
    });
    const mail = await get(`/me/messages/${invite.id}`);
    // The schema has no eventMessage: it is checked as a message (an open type) and its own properties here.
    expect(mail).toMatchObject({
      '@odata.type': '#microsoft.graph.eventMessage',
      meetingMessageType: 'meetingRequest',
      isOutOfDate: false,
      isAllDay: false,
      isDelegated: false,
      type: 'singleInstance',
      startDateTime: { dateTime: '2030-07-01T13:00:00.0000000', timeZone: 'UTC' },
      endDateTime: { dateTime: '2030-07-01T14:00:00.0000000', timeZone: 'UTC' },
      location: { displayName: 'Room 4' },
    });
    expectGraph('dateTimeTimeZone', mail.startDateTime);
    expectGraph('location', mail.location);
    const delta = (await graph.api('/me/mailFolders/inbox/messages/delta').get()) as Json;
    expectGraph('messageCollectionResponse', delta);
    expect((delta.value as Json[])[0]).toMatchObject({ id: invite.id, meetingMessageType: 'meetingRequest' });
  });
});

describe('message changes and errors', () => {
  it('marks a mail read through PATCH with a new change key, and refuses a stale If-Match with 412', async () => {
    const mail = await deliver({ from: 'ada@example.com', subject: 'Read me' });
    const read = (await graph
      .api(`/me/messages/${mail.id}`)
      .header('If-Match', String(mail['@odata.etag']))
      .patch({ isRead: true, flag: { flagStatus: 'flagged' } })) as Json;
    expectGraph('message', read);
    expect(read).toMatchObject({ isRead: true, flag: { flagStatus: 'flagged' } });
    expect(read.changeKey).not.toBe(mail.changeKey);
    const stale = graph.api(`/me/messages/${mail.id}`).header('If-Match', String(mail['@odata.etag']));
    expect(await graphRefusal(stale.patch({ isRead: false }))).toMatchObject({ status: 412 });
    expect(
      await graphRefusal(graph.api(`/me/messages/${mail.id}`).patch({ subject: 'Edited' })),
    ).toMatchObject({
      status: 400,
    });

    const state = await ms.expectControl<{ messages: Json[]; deletedIds: string[] }>(
      200,
      'GET',
      `/_emulator/microsoft/users/${dana.upn}/mail/messages`,
    );
    expect(state.messages.map((m) => [m.folder, m.subject, m.isRead])).toEqual([['inbox', 'Read me', true]]);
    await graph.api(`/me/messages/${mail.id}`).delete();
    const after = await ms.expectControl<{ deletedIds: string[] }>(
      200,
      'GET',
      `/_emulator/microsoft/users/${dana.upn}/mail/messages`,
    );
    expect(after.deletedIds).toEqual([mail.immutableId]);
  });

  it('answers 404 ErrorItemNotFound for unknown and deleted ids, 400 for malformed ones', async () => {
    const mail = await deliver({ from: 'ada@example.com', subject: 'Soon gone' });
    expect(await graphRefusal(graph.api(`/me/messages/${UNKNOWN_MESSAGE}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    expect(await graphRefusal(graph.api(`/me/mailFolders/archive/messages/${mail.id}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    await ms.expectControl(204, 'DELETE', `${ui()}/${mail.id}`);
    expect(await graphRefusal(graph.api(`/me/messages/${mail.id}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    expect(await graphRefusal(graph.api('/me/messages/not-an-id').get())).toMatchObject({
      status: 400,
      code: 'ErrorInvalidIdMalformed',
    });
    const refused = await ms.control('POST', ui(), { subject: 'No sender' });
    expect(refused.status).toBe(400);
  });
});
