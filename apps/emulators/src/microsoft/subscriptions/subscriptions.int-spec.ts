import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectGraph } from '../testing/graph-schema';
import { type GraphAccount, graphFailure, type Json, MicrosoftHarness } from '../testing/microsoft-harness';
import { NotificationReceiver } from '../testing/notification-receiver';

let ms: MicrosoftHarness;
let dana: GraphAccount;
let hooks: NotificationReceiver;
let lifecycle: NotificationReceiver;

const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

const event = (day: number): Json => ({
  subject: `Meeting ${day}`,
  start: { dateTime: `2030-03-${String(day).padStart(2, '0')}T09:00:00`, timeZone: 'UTC' },
  end: { dateTime: `2030-03-${String(day).padStart(2, '0')}T10:00:00`, timeZone: 'UTC' },
});

const mail = {
  from: 'lee@fabrikam.example',
  to: ['dana@contoso.example'],
  subject: 'Hello',
  body: 'Hi Dana',
};

async function subscribe(extra: Json = {}): Promise<Json> {
  const created = (await dana.client.api('/subscriptions').post({
    changeType: 'created,updated,deleted',
    notificationUrl: hooks.url,
    resource: '/me/events',
    expirationDateTime: inMinutes(60),
    clientState: 'secret-state',
    ...extra,
  })) as Json;
  expectGraph('subscription', created);
  return created;
}

async function refused(body: Json): Promise<{ status: number; code: unknown; message: unknown }> {
  const { status, body: error } = await graphFailure(dana.client.api('/subscriptions').post(body));
  expectGraph('odataError', error);
  const inner = error.error as Json;
  return { status, code: inner.code, message: inner.message };
}

beforeAll(async () => {
  ms = await MicrosoftHarness.start();
  hooks = await NotificationReceiver.start();
  lifecycle = await NotificationReceiver.start();
});

afterAll(async () => {
  await Promise.all([hooks.close(), lifecycle.close()]);
  await ms.close();
});

beforeEach(async () => {
  await ms.reset();
  for (const receiver of [hooks, lifecycle]) {
    receiver.posts.length = 0;
    receiver.validations.length = 0;
    receiver.handshake = 'echo';
    receiver.failNext = 0;
  }
  await ms.expectControl(200, 'POST', '/_emulator/microsoft/subscriptions/settings', {
    validationTimeoutMs: 500,
    batchWindowMs: 20,
    retryBaseMs: 50,
    retryForMs: 1_000,
  });
  dana = await ms.account('dana@contoso.example');
});

describe('creating a subscription', () => {
  it('validates both URLs, then answers 201 with the subscription, readable and listed', async () => {
    const created = await subscribe({ lifecycleNotificationUrl: lifecycle.url });
    expect(hooks.validations).toHaveLength(1);
    expect(lifecycle.validations).toHaveLength(1);
    expect(hooks.validations[0]).toMatch(/^Validation: /);
    expect(created).toMatchObject({
      resource: '/me/events',
      changeType: 'created,updated,deleted',
      clientState: 'secret-state',
      notificationUrl: hooks.url,
      lifecycleNotificationUrl: lifecycle.url,
      creatorId: dana.userId,
    });
    const read = (await dana.client.api(`/subscriptions/${created.id}`).get()) as Json;
    expect(read.id).toBe(created.id);
    const list = (await dana.client.api('/subscriptions').get()) as { value: Json[] };
    expectGraph('subscriptionCollectionResponse', list);
    expect(list.value.map((s) => s.id)).toEqual([created.id]);
  });

  it('refuses when the endpoint echoes the wrong token, and keeps no subscription', async () => {
    hooks.handshake = 'wrong-echo';
    const error = await refused({
      changeType: 'created',
      notificationUrl: hooks.url,
      resource: 'me/events',
      expirationDateTime: inMinutes(60),
    });
    expect(error).toMatchObject({ status: 400, code: 'ValidationError' });
    expect(hooks.validations).toHaveLength(1);
    const list = (await dana.client.api('/subscriptions').get()) as { value: Json[] };
    expect(list.value).toEqual([]);
  });

  it('refuses when the endpoint does not answer in time', async () => {
    hooks.handshake = 'silent';
    const error = await refused({
      changeType: 'created',
      notificationUrl: hooks.url,
      resource: '/me/events',
      expirationDateTime: inMinutes(60),
    });
    expect(error).toMatchObject({
      status: 400,
      code: 'ValidationError',
      message: expect.stringMatching(/timeout/),
    });
  });

  it('refuses the lifecycle URL on its own failing handshake', async () => {
    lifecycle.handshake = 'wrong-echo';
    const error = await refused({
      changeType: 'created',
      notificationUrl: hooks.url,
      lifecycleNotificationUrl: lifecycle.url,
      resource: '/me/events',
      expirationDateTime: inMinutes(60),
    });
    expect(error).toMatchObject({ status: 400, code: 'ValidationError' });
  });

  it('refuses an expiration in the past or beyond 4,230 minutes, a long clientState, an unknown resource', async () => {
    const base = { changeType: 'created', notificationUrl: hooks.url, resource: '/me/events' };
    expect(await refused({ ...base, expirationDateTime: inMinutes(-1) })).toMatchObject({ status: 400 });
    expect(await refused({ ...base, expirationDateTime: inMinutes(4_231) })).toMatchObject({
      status: 400,
      message: expect.stringMatching(/4230 minutes/),
    });
    expect(
      await refused({ ...base, expirationDateTime: inMinutes(60), clientState: 'x'.repeat(129) }),
    ).toMatchObject({ status: 400 });
    expect(
      await refused({ ...base, resource: '/me/contacts', expirationDateTime: inMinutes(60) }),
    ).toMatchObject({
      status: 400,
    });
    expect(await refused({ ...base, changeType: 'moved', expirationDateTime: inMinutes(60) })).toMatchObject({
      status: 400,
    });
    expect(hooks.validations).toEqual([]);
  });
});

describe('change notifications', () => {
  it('tells of a created, updated and deleted event with resource, changeType and clientState', async () => {
    const subscription = await subscribe();
    const created = (await dana.client.api('/me/events').post(event(14))) as Json;
    await dana.client.api(`/me/events/${created.id}`).patch({ subject: 'Moved' });
    await dana.client.api(`/me/events/${created.id}`).delete();
    await hooks.waitFor(3);
    for (const post of hooks.posts) expectGraph('changeNotificationCollection', post);
    const notifications = hooks.notifications;
    expect(notifications.map((n) => n.changeType).sort()).toEqual(['created', 'deleted', 'updated']);
    const tenant = (await ms.expectControl<Json[]>(200, 'GET', '/_emulator/microsoft/users'))[0]!.tenantId;
    for (const n of notifications)
      expect(n).toMatchObject({
        subscriptionId: subscription.id,
        subscriptionExpirationDateTime: subscription.expirationDateTime,
        clientState: 'secret-state',
        tenantId: tenant,
        resource: `Users/${dana.userId}/Events/${created.id}`,
        resourceData: {
          '@odata.type': '#Microsoft.Graph.Event',
          '@odata.id': `Users/${dana.userId}/Events/${created.id}`,
          id: created.id,
        },
      });
  });

  it('tells of an event a person makes in Outlook (control route)', async () => {
    await subscribe({ changeType: 'created' });
    const made = await ms.expectControl<Json>(
      201,
      'POST',
      `/_emulator/microsoft/users/${dana.upn}/ui/calendar/events`,
      event(3),
    );
    const [n] = await hooks.waitFor(1);
    expect(n).toMatchObject({ changeType: 'created', resource: `Users/${dana.userId}/Events/${made.id}` });
  });

  it('tells of mail received in the inbox, and only of the change types subscribed', async () => {
    await subscribe({ resource: "/me/mailFolders('inbox')/messages", changeType: 'created' });
    const received = await ms.expectControl<Json>(
      201,
      'POST',
      `/_emulator/microsoft/users/${dana.upn}/ui/mail/messages`,
      mail,
    );
    const [n] = await hooks.waitFor(1);
    expectGraph('changeNotificationCollection', hooks.posts[0]);
    expect(n).toMatchObject({
      changeType: 'created',
      clientState: 'secret-state',
      resource: `Users/${dana.userId}/Messages/${received.id}`,
      resourceData: { '@odata.type': '#Microsoft.Graph.Message', id: received.id },
    });
    await ms.expectControl(
      200,
      'PATCH',
      `/_emulator/microsoft/users/${dana.upn}/ui/mail/messages/${received.id}`,
      {
        isRead: true,
      },
    );
    await ms.expectControl(201, 'POST', `/_emulator/microsoft/users/${dana.upn}/ui/mail/messages`, {
      ...mail,
      folder: 'sentitems',
      from: dana.upn,
      to: ['lee@fabrikam.example'],
    });
    expect(await hooks.settle()).toHaveLength(1);
  });

  it('tells of a To Do task in the subscribed list', async () => {
    const lists = (await dana.client.api('/me/todo/lists').get()) as { value: Json[] };
    const listId = lists.value[0]!.id as string;
    await subscribe({ resource: `/me/todo/lists/${listId}/tasks` });
    const task = (await dana.client
      .api(`/me/todo/lists/${listId}/tasks`)
      .post({ title: 'Call Lee' })) as Json;
    const [n] = await hooks.waitFor(1);
    expect(n).toMatchObject({
      changeType: 'created',
      resource: `Users/${dana.userId}/todo/lists/${listId}/tasks/${task.id}`,
    });
  });

  it('retries a delivery the receiver fails, until it is taken', async () => {
    await subscribe();
    hooks.failNext = 2;
    await dana.client.api('/me/events').post(event(5));
    await hooks.waitFor(1, 3_000);
    const state = await ms.expectControl<{ deliveries: { outcome: unknown }[] }>(
      200,
      'GET',
      '/_emulator/microsoft/subscriptions',
    );
    expect(state.deliveries.map((d) => d.outcome)).toEqual([500, 500, 202]);
  });

  it('drops or duplicates notifications under the webhook faults', async () => {
    await subscribe();
    await ms.fault({ kind: 'drop-webhooks', count: 1, account: dana.upn });
    await dana.client.api('/me/events').post(event(6));
    expect(await hooks.settle()).toEqual([]);
    await ms.fault({ kind: 'duplicate-webhooks', count: 1, account: dana.upn });
    const created = (await dana.client.api('/me/events').post(event(7))) as Json;
    const notifications = await hooks.waitFor(2);
    expect(notifications.map((n) => (n.resourceData as Json).id)).toEqual([created.id, created.id]);
  });
});

describe('subscription lifetime', () => {
  it('stops notifying once expired, and the subscription is gone', async () => {
    const subscription = await subscribe({ expirationDateTime: new Date(Date.now() + 1_200).toISOString() });
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    await dana.client.api('/me/events').post(event(8));
    expect(await hooks.settle()).toEqual([]);
    const { status } = await graphFailure(dana.client.api(`/subscriptions/${subscription.id}`).get());
    expect(status).toBe(404);
  });

  it('renews with PATCH, under the same limit', async () => {
    const subscription = await subscribe();
    const later = inMinutes(4_000);
    const renewed = (await dana.client
      .api(`/subscriptions/${subscription.id}`)
      .patch({ expirationDateTime: later })) as Json;
    expectGraph('subscription', renewed);
    expect(renewed.expirationDateTime).toBe(later);
    const { status } = await graphFailure(
      dana.client.api(`/subscriptions/${subscription.id}`).patch({ expirationDateTime: inMinutes(5_000) }),
    );
    expect(status).toBe(400);
  });

  it('deletes with 204, after which nothing is sent', async () => {
    const subscription = await subscribe();
    await dana.client.api(`/subscriptions/${subscription.id}`).delete();
    await dana.client.api('/me/events').post(event(9));
    expect(await hooks.settle()).toEqual([]);
    const { status } = await graphFailure(dana.client.api(`/subscriptions/${subscription.id}`).get());
    expect(status).toBe(404);
  });

  it('sends lifecycle events; reauthorize answers 204; subscriptionRemoved ends the subscription', async () => {
    const subscription = await subscribe({ lifecycleNotificationUrl: lifecycle.url });
    const path = `/_emulator/microsoft/subscriptions/${subscription.id}/lifecycle`;
    await ms.expectControl(202, 'POST', path, { event: 'reauthorizationRequired' });
    const [reauth] = await lifecycle.waitFor(1);
    expectGraph('changeNotificationCollection', lifecycle.posts[0]);
    expect(reauth).toMatchObject({
      subscriptionId: subscription.id,
      clientState: 'secret-state',
      lifecycleEvent: 'reauthorizationRequired',
    });
    await dana.client.api(`/subscriptions/${subscription.id}/reauthorize`).post({});
    await ms.expectControl(202, 'POST', path, { event: 'missed' });
    await ms.expectControl(202, 'POST', path, { event: 'subscriptionRemoved' });
    const events = await lifecycle.waitFor(3);
    expect(events.map((n) => n.lifecycleEvent)).toEqual([
      'reauthorizationRequired',
      'missed',
      'subscriptionRemoved',
    ]);
    const state = await ms.expectControl<{ subscriptions: Json[] }>(
      200,
      'GET',
      '/_emulator/microsoft/subscriptions',
    );
    expect(state.subscriptions).toEqual([]);
    expect(hooks.notifications).toEqual([]);
  });
});
