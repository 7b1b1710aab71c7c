import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from './testing/graph-schema';
import { graphRefusal, type Json, MicrosoftHarness } from './testing/microsoft-harness';

let ms: MicrosoftHarness;

beforeAll(async () => {
  ms = await MicrosoftHarness.start();
});

afterAll(async () => {
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
});

/** The status and Graph error code of an SDK call that must fail; the body checked as Graph's. */
async function refused(call: Promise<unknown>): Promise<{ status: number; code: unknown }> {
  const { status, code } = await graphRefusal(call);
  return { status, code };
}

const DENIED = { status: 403, code: 'ErrorAccessDenied' };
const EVENT = {
  subject: 'Pipeline review',
  start: { dateTime: '2026-12-07T09:00:00', timeZone: 'UTC' },
  end: { dateTime: '2026-12-07T09:30:00', timeZone: 'UTC' },
};

describe('delegated permissions, as Graph checks them', () => {
  it('reads with a Read scope, refuses writes without ReadWrite, and refuses areas not granted', async () => {
    const { client } = await ms.account('rey@contoso.example', [
      'offline_access',
      'User.Read',
      'Calendars.Read',
      'Mail.Read',
    ]);
    const events = (await client.api('/me/events').get()) as Json;
    expectGraph('eventCollectionResponse', events);
    expect(await refused(client.api('/me/events').post(EVENT))).toEqual(DENIED);
    const inbox = (await client.api('/me/mailFolders/inbox/messages/delta').get()) as Json;
    expect(inbox['@odata.deltaLink']).toEqual(expect.stringMatching(/^https:\/\//));
    expect(await refused(client.api('/me/todo/lists').get())).toEqual(DENIED);
  });

  it('lets the same calls through with ReadWrite, the scopes compared without case', async () => {
    const { client } = await ms.account('sam@contoso.example', ['calendars.readwrite', 'TASKS.READWRITE']);
    const created = (await client.api('/me/events').post(EVENT)) as Json;
    expectGraph('event', created);
    const lists = (await client.api('/me/todo/lists').get()) as Json;
    expect((lists.value as Json[]).length).toBeGreaterThan(0);
    expect(await refused(client.api('/me/messages').get())).toEqual(DENIED);
  });

  it('refuses a subscription to a resource the token cannot read, before any handshake', async () => {
    const { client } = await ms.account('lee@contoso.example', ['Mail.Read']);
    const subscription = {
      changeType: 'created,updated,deleted',
      notificationUrl: 'https://127.0.0.1:9/notifications',
      resource: '/me/events',
      expirationDateTime: new Date(Date.now() + 3_600_000).toISOString(),
      clientState: 'state',
    };
    expect(await refused(client.api('/subscriptions').post(subscription))).toEqual(DENIED);
  });
});
