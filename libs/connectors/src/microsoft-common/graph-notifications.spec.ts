import { describe, expect, it } from 'vitest';
import type { WebhookRequest } from '../contract/connector';
import {
  graphNotificationSubscriptions,
  parseGraphNotification,
  verifyGraphNotification,
} from './graph-notifications';

const request = (body: unknown): WebhookRequest => ({
  method: 'POST',
  url: 'https://sync.example.com/webhooks/microsoft-calendar',
  headers: { 'content-type': 'application/json' },
  rawBody: typeof body === 'string' ? body : JSON.stringify(body),
  receivedAt: new Date(),
});

const change = (subscriptionId: string, clientState: string | null) => ({
  subscriptionId,
  clientState,
  changeType: 'updated',
  resource: 'Users/0f1e/Events/AAMk',
  subscriptionExpirationDateTime: '2026-12-08T10:00:00Z',
  tenantId: '5b3c1f1e-8d0a-4f7e-9c61-0f2d7a1b9e44',
  resourceData: { '@odata.type': '#Microsoft.Graph.Event', id: 'AAMk' },
});

const channels = [
  { id: 'sub-a', token: 'state-a' },
  { id: 'sub-b', token: 'state-b' },
];

describe('Graph change notifications', () => {
  it('verifies a POST whose every item names a subscription with its own clientState', () => {
    expect(verifyGraphNotification(request({ value: [change('sub-a', 'state-a')] }), { channels }).ok).toBe(
      true,
    );
    expect(
      verifyGraphNotification(request({ value: [change('sub-a', 'state-a'), change('sub-b', 'state-b')] }), {
        channels,
      }).ok,
    ).toBe(true);
  });

  it.each([
    ['another subscription’s clientState', { value: [change('sub-a', 'state-b')] }],
    ['an unknown subscription', { value: [change('sub-c', 'state-a')] }],
    ['no clientState', { value: [change('sub-a', null)] }],
    ['one forged item among good ones', { value: [change('sub-a', 'state-a'), change('sub-b', 'forged')] }],
    ['an empty list', { value: [] }],
    ['no value', { notifications: [change('sub-a', 'state-a')] }],
    ['a body that is not JSON', 'validationToken=abc'],
  ])('refuses %s', (_name, body) => {
    const res = verifyGraphNotification(request(body), { channels });
    expect(res.ok ? 'verified' : res.error.code).toBe('Validation');
  });

  it('refuses everything when no subscription is known', () => {
    const res = verifyGraphNotification(request({ value: [change('sub-a', 'state-a')] }), {});
    expect(res.ok).toBe(false);
  });

  it('names the subscriptions a POST is about, once each', () => {
    const ids = graphNotificationSubscriptions(
      JSON.stringify({ value: [change('sub-a', 'x'), change('sub-b', 'y'), change('sub-a', 'z')] }),
    );
    expect(ids.ok && ids.value).toEqual(['sub-a', 'sub-b']);
  });

  it('turns changes into a pull, and lifecycle events into a pull that also renews or recreates', () => {
    const pull = parseGraphNotification(request({ value: [change('sub-a', 'state-a')] }), 'calendar');
    expect(pull.ok && pull.value).toEqual({ kind: 'pull', reason: 'calendar updated' });
    const lifecycle = (lifecycleEvent: string) =>
      parseGraphNotification(
        request({ value: [{ subscriptionId: 'sub-a', clientState: 'state-a', lifecycleEvent }] }),
        'calendar',
      );
    const reauthorize = lifecycle('reauthorizationRequired');
    expect(reauthorize.ok && reauthorize.value).toMatchObject({ kind: 'pull', subscription: 'reauthorize' });
    const removed = lifecycle('subscriptionRemoved');
    expect(removed.ok && removed.value).toMatchObject({ kind: 'pull', subscription: 'recreate' });
    const missed = lifecycle('missed');
    expect(missed.ok && missed.value).toEqual({ kind: 'pull', reason: 'calendar subscription missed' });
    const unknown = lifecycle('somethingElse');
    expect(unknown.ok).toBe(false);
  });
});
