import type { Client } from '@microsoft/microsoft-graph-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, type Json, MicrosoftHarness } from '../testing/microsoft-harness';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let graph: Client;

const seed = () => `/_emulator/microsoft/users/${dana.upn}/seed/mail`;
const SELECT =
  'receivedDateTime,sentDateTime,internetMessageId,conversationId,subject,from,toRecipients,ccRecipients,isDraft';

/** Every message of one delta round of a folder, 50 a page, and the pages it took. */
async function readRound(folder: string, filter?: string): Promise<{ messages: Json[]; pages: number }> {
  const messages: Json[] = [];
  let url = `/me/mailFolders/${folder}/messages/delta?$select=${SELECT}${filter ? `&$filter=${filter}` : ''}`;
  for (let pages = 1; ; pages++) {
    const page = (await graph
      .api(url)
      .header('Prefer', 'odata.maxpagesize=50, IdType="ImmutableId"')
      .get()) as Json;
    expectGraph('messageCollectionResponse', page);
    messages.push(...(page.value as Json[]));
    if (typeof page['@odata.deltaLink'] === 'string') return { messages, pages };
    url = String(page['@odata.nextLink']);
  }
}

const address = (r: unknown) => ((r as Json).emailAddress as Json).address as string;

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

describe('seeding a mailbox (control API)', () => {
  it('files count messages into the inbox and Sent Items, which message delta reads through the SDK', async () => {
    const from = new Date(Date.now() - 10 * 86_400_000).toISOString();
    const inbox = await ms.expectControl<Json>(201, 'POST', seed(), { count: 120, from });
    expect(inbox).toMatchObject({ count: 120, folder: 'inbox', from });
    expect(
      await ms.expectControl<Json>(201, 'POST', seed(), { count: 30, folder: 'sentitems', from }),
    ).toMatchObject({ count: 30, folder: 'sentitems' });

    const received = await readRound('inbox');
    expect(received.pages).toBe(3);
    expect(received.messages).toHaveLength(120);
    const sent = await readRound('sentitems');
    expect(sent.messages).toHaveLength(30);
    const all = [...received.messages, ...sent.messages];
    expect(new Set(all.map((m) => m.id)).size).toBe(150);
    expect(new Set(all.map((m) => m.internetMessageId)).size).toBe(150);
    expect(new Set(all.map((m) => m.conversationId)).size).toBe(150);
    for (const m of all) {
      expect(m.isDraft).toBe(false);
      const at = Date.parse(String(m.receivedDateTime));
      expect(at).toBeGreaterThanOrEqual(Date.parse(from) - 1_000);
      expect(at).toBeLessThanOrEqual(Date.now());
    }
    // Received from many people, to the owner; sent by the owner to many.
    expect(new Set(received.messages.map((m) => address(m.from))).size).toBe(120);
    expect(received.messages.every((m) => (m.toRecipients as Json[]).map(address).includes(dana.upn))).toBe(
      true,
    );
    expect(received.messages.some((m) => (m.ccRecipients as Json[]).length > 0)).toBe(true);
    expect(sent.messages.every((m) => address(m.from) === dana.upn)).toBe(true);
    expect(new Set(sent.messages.map((m) => address((m.toRecipients as Json[])[0]))).size).toBe(30);
    // Received times spread over the range: a filter on the last five days keeps about half.
    const recent = await readRound(
      'inbox',
      `receivedDateTime ge ${new Date(Date.now() - 5 * 86_400_000).toISOString()}`,
    );
    expect(recent.messages.length).toBeGreaterThan(50);
    expect(recent.messages.length).toBeLessThan(70);
  });

  it('refuses a bad body with 400 and an unknown mailbox with 404', async () => {
    for (const body of [
      {},
      { count: 0 },
      { count: 100_001 },
      { count: 5, folder: 'drafts' },
      { count: 5, from: new Date(Date.now() + 86_400_000).toISOString() },
      { count: 5, from: 'last week' },
      { count: 5, subject: 'Hello' },
    ])
      expect((await ms.control('POST', seed(), body)).status, JSON.stringify(body)).toBe(400);
    expect(
      (await ms.control('POST', '/_emulator/microsoft/users/nobody@contoso.example/seed/mail', { count: 1 }))
        .status,
    ).toBe(404);
    const stored = await ms.control<{ messages: unknown[] }>(
      'GET',
      `/_emulator/microsoft/users/${dana.upn}/mail/messages`,
    );
    expect(stored.body.messages).toEqual([]);
  });
});
