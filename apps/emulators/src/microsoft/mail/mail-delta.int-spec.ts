import { type Client, ResponseType } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphRefusal, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;

const INBOX = '/me/mailFolders/inbox/messages/delta';
const ARCHIVE = '/me/mailFolders/archive/messages/delta';
const PAGE_OF_2 = 'odata.maxpagesize=2';
const IMMUTABLE = 'IdType="ImmutableId"';

const ui = () => `/_emulator/microsoft/users/${dana.upn}/ui/mail/messages`;

/** A mail arriving as Outlook would receive it; its body as the control API answers it. */
async function receive(subject: string, extra: Json = {}): Promise<Json> {
  const mail = await ms.expectControl<Json>(201, 'POST', ui(), {
    from: 'Ada <ada@example.com>',
    subject,
    ...extra,
  });
  expectGraph('message', mail);
  return mail;
}

interface Round {
  pages: Json[];
  deltaLink: string;
  entries: Json[];
}

/** One delta round the way a connector runs it: follow nextLink to the end, keep the deltaLink. */
async function round(first: string, prefer = PAGE_OF_2): Promise<Round> {
  const pages: Json[] = [];
  let url = first;
  for (;;) {
    const page = (await graph.api(url).header('Prefer', prefer).get()) as Json;
    expectGraph('messageCollectionResponse', page);
    pages.push(page);
    const next = page['@odata.nextLink'];
    const delta = page['@odata.deltaLink'];
    expect([typeof next, typeof delta].sort(), 'a nextLink or a deltaLink, never both').toEqual([
      'string',
      'undefined',
    ]);
    const folderDelta =
      /^https:\/\/[^/]+\/v1\.0\/me\/mailFolders\/[^/]+\/messages\/delta\?\$(skip|delta)token=/;
    if (typeof delta === 'string') {
      expect(delta.startsWith(ms.url) && folderDelta.test(delta)).toBe(true);
      return { pages, deltaLink: delta, entries: pages.flatMap((p) => p.value as Json[]) };
    }
    expect(String(next).startsWith(ms.url) && folderDelta.test(String(next))).toBe(true);
    url = String(next);
  }
}

/** A round's entries as [id, what]: the subject (and read flag) of an item, or `removed`. */
const changes = (r: Round) =>
  r.entries.map((e) => [
    e.id,
    e['@removed'] ? `removed:${(e['@removed'] as Json).reason}` : `${e.subject}${e.isRead ? ' (read)' : ''}`,
  ]);

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

describe('message delta rounds', () => {
  it('pages the first round to a deltaLink, then reports a new, a read, a deleted and a moved mail in both folders', async () => {
    const mails: Json[] = [];
    for (const n of [1, 2, 3, 4, 5]) mails.push(await receive(`Mail ${n}`));
    const filed = await receive('Filed long ago', { folder: 'archive' });

    const raw = (await graph
      .api(`${INBOX}?$select=subject,isRead`)
      .header('Prefer', PAGE_OF_2)
      .responseType(ResponseType.RAW)
      .get()) as Response;
    expect(raw.headers.get('preference-applied')).toBe('odata.maxpagesize=2');
    const initial = await round(`${INBOX}?$select=subject,isRead`);
    expect(initial.pages.map((p) => (p.value as Json[]).length)).toEqual([2, 2, 1]);
    expect(initial.entries.map((e) => e.id)).toEqual(mails.map((m) => m.id));
    // $select of the first call holds for the whole round; id, etag and type always come.
    expect(Object.keys(initial.entries[4]!).sort()).toEqual([
      '@odata.etag',
      '@odata.type',
      'id',
      'isRead',
      'subject',
    ]);
    expect(initial.entries[4]!['@odata.type']).toBe('#microsoft.graph.message');
    expect(initial.deltaLink).not.toContain('select');
    const archived = await round(ARCHIVE);
    expect(changes(archived)).toEqual([[filed.id, 'Filed long ago']]);

    const [, second, third, fourth] = mails;
    await graph.api(`/me/messages/${second!.id}`).patch({ isRead: true });
    await ms.expectControl(204, 'DELETE', `${ui()}/${third!.id}`);
    const moved = await ms.expectControl<Json>(200, 'POST', `${ui()}/${fourth!.id}/move`, {
      folder: 'archive',
    });
    const fresh = await receive('Mail 6');

    const next = await round(initial.deltaLink);
    expect(changes(next)).toEqual([
      [second!.id, 'Mail 2 (read)'],
      [third!.id, 'removed:deleted'],
      [fourth!.id, 'removed:deleted'],
      [fresh.id, 'Mail 6'],
    ]);
    expect(next.entries[1]).toEqual({
      '@odata.type': '#microsoft.graph.message',
      id: third!.id,
      '@removed': { reason: 'deleted' },
    });
    // Moved without Prefer IdType: a new item in the target folder, under a new id.
    expect(moved.id).not.toBe(fourth!.id);
    expect(moved.immutableId).toBe(fourth!.immutableId);
    const folders = (await graph.api('/me/mailFolders').get()) as Json;
    const archiveId = (folders.value as Json[]).find((f) => f.displayName === 'Archive')!.id;
    expect(moved.parentFolderId).toBe(archiveId);
    const intoArchive = await round(archived.deltaLink);
    expect(changes(intoArchive)).toEqual([[moved.id, 'Mail 4']]);
    expect(intoArchive.entries[0]).toMatchObject({
      parentFolderId: archiveId,
      conversationId: fourth!.conversationId,
    });

    expect((await round(next.deltaLink)).entries).toEqual([]);
    expect((await round(intoArchive.deltaLink)).entries).toEqual([]);
  });

  it('keeps one id across a move under Prefer IdType="ImmutableId", and the old REST id is gone', async () => {
    const mail = await receive('Travel plans');
    const prefer = `${IMMUTABLE}, ${PAGE_OF_2}`;
    const inbox = await round(INBOX, prefer);
    const archive = await round(ARCHIVE, prefer);
    expect(inbox.entries.map((e) => e.id)).toEqual([mail.immutableId]);

    const moved = (await graph
      .api(`/me/messages/${mail.id}/move`)
      .header('Prefer', IMMUTABLE)
      .post({ destinationId: 'archive' })) as Json;
    expectGraph('message', moved);
    expect(moved.id).toBe(mail.immutableId);

    expect(changes(await round(inbox.deltaLink, prefer))).toEqual([[mail.immutableId, 'removed:deleted']]);
    expect(changes(await round(archive.deltaLink, prefer))).toEqual([[mail.immutableId, 'Travel plans']]);
    expect(await graphRefusal(graph.api(`/me/messages/${mail.id}`).get())).toMatchObject({
      status: 404,
      code: 'ErrorItemNotFound',
    });
    const byImmutable = (await graph.api(`/me/messages/${mail.immutableId}`).get()) as Json;
    expect(byImmutable.subject).toBe('Travel plans');
  });

  it('applies $filter=receivedDateTime ge … of the first call to every round after it', async () => {
    await receive('January', { receivedAt: '2030-01-15T08:00:00Z' });
    const february = await receive('February', { receivedAt: '2030-02-01T00:00:00Z' });
    const march = await receive('March', { receivedAt: '2030-03-10T12:30:00Z' });

    const filtered = `${INBOX}?$filter=receivedDateTime ge 2030-02-01T00:00:00Z`;
    const initial = await round(filtered);
    expect(changes(initial)).toEqual([
      [february.id, 'February'],
      [march.id, 'March'],
    ]);
    expect(initial.entries[1]!.receivedDateTime).toBe('2030-03-10T12:30:00Z');
    expect(initial.deltaLink).not.toContain('filter');

    const late = await receive('Backdated', { receivedAt: '2029-12-31T23:59:59Z' });
    const april = await receive('April', { receivedAt: '2030-04-01T09:00:00Z' });
    await ms.expectControl(204, 'DELETE', `${ui()}/${late.id}`);
    expect(changes(await round(initial.deltaLink))).toEqual([[april.id, 'April']]);

    const gt = await round(`${INBOX}?$filter=receivedDateTime gt 2030-02-01T00:00:00Z`);
    expect(gt.entries.map((e) => e.subject)).toEqual(['March', 'April']);
    expect(await graphRefusal(graph.api(`${INBOX}?$filter=subject eq 'March'`).get())).toMatchObject({
      status: 400,
      code: 'ErrorInvalidUrlQueryFilter',
    });
  });

  it('with changeType=created, reports only mails new to the folder after the first round', async () => {
    const read = await receive('Will be read');
    const gone = await receive('Will be deleted');
    const initial = await round(`${INBOX}?changeType=created`);
    expect(initial.entries).toHaveLength(2);
    await graph.api(`/me/messages/${read.id}`).patch({ isRead: true });
    await ms.expectControl(204, 'DELETE', `${ui()}/${gone.id}`);
    const fresh = await receive('New one');
    expect(changes(await round(initial.deltaLink))).toEqual([[fresh.id, 'New one']]);
  });
});

describe('message delta sync state', () => {
  it('answers syncStateNotFound once the sync state is evicted, by fault or by the control API', async () => {
    for (const n of [1, 2, 3]) await receive(`Mail ${n}`);
    const initial = await round(INBOX);
    const midRound = String(
      ((await graph.api(INBOX).header('Prefer', PAGE_OF_2).get()) as Json)['@odata.nextLink'],
    );

    await ms.fault({ kind: 'invalidate-cursors', account: dana.upn, count: 1 });
    expect(await graphRefusal(graph.api(initial.deltaLink).get())).toMatchObject({
      status: 410,
      code: 'syncStateNotFound',
    });
    expect(await graphRefusal(graph.api(midRound).get())).toMatchObject({
      status: 410,
      code: 'syncStateNotFound',
    });
    const resync = await round(INBOX);
    expect(resync.entries).toHaveLength(3);
    expect((await round(resync.deltaLink)).entries).toEqual([]);

    const invalidate = `/_emulator/microsoft/users/${dana.upn}/mail/invalidate-delta`;
    await ms.expectControl(204, 'POST', invalidate, { status: 400 });
    expect(await graphRefusal(graph.api(resync.deltaLink).get())).toMatchObject({
      status: 400,
      code: 'syncStateNotFound',
    });

    const filtered = `${INBOX}?$select=subject&$filter=receivedDateTime ge 2000-01-01T00:00:00Z`;
    const again = await round(filtered);
    await ms.expectControl(204, 'POST', invalidate, { status: 410, restart: true });
    const gone = await graphRefusal(graph.api(again.deltaLink).get());
    expect(gone).toMatchObject({ status: 410, code: 'syncStateNotFound' });
    const location = gone.headers?.get('location');
    expect(location).toBe(
      `${ms.url}/v1.0/me/mailFolders/inbox/messages/delta?$select=subject&$filter=receivedDateTime+ge+2000-01-01T00%3A00%3A00Z`,
    );
    expect((await round(String(location))).entries.map((e) => Object.keys(e).sort())).toEqual(
      Array(3).fill(['@odata.etag', '@odata.type', 'id', 'subject']),
    );
  });

  it("refuses one folder's token on another folder's delta", async () => {
    const inbox = await round(INBOX);
    const token = new URL(inbox.deltaLink).searchParams.get('$deltatoken');
    expect(
      await graphRefusal(graph.api(`/me/mailFolders/archive/messages/delta?$deltatoken=${token}`).get()),
    ).toMatchObject({ status: 400, code: 'syncStateNotFound' });
  });
});
