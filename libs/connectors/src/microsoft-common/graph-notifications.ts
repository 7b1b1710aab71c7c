import { err, ok } from '@syncline/core';
import { z } from 'zod';
import type { ConnectorResult, WebhookOutcome, WebhookRequest, WebhookSecrets } from '../contract/connector';
import { constantTimeEqual } from '../shared/constant-time';

/**
 * One item of a Graph notification POST (`{ value: [...] }`): a change notification
 * (`changeType`, `resource`) or a lifecycle notification (`lifecycleEvent`). Only what we use
 * is read; the rest passes.
 */
const notificationItem = z.looseObject({
  subscriptionId: z.string().min(1),
  clientState: z.string().nullish(),
  changeType: z.string().optional(),
  lifecycleEvent: z.enum(['reauthorizationRequired', 'subscriptionRemoved', 'missed']).optional(),
  resource: z.string().optional(),
});
const notificationBody = z.object({ value: z.array(notificationItem).min(1).max(1_000) });

export type GraphNotification = z.output<typeof notificationItem>;

/** The items of a Graph notification POST, or Validation when the body is not one. */
export function readGraphNotifications(rawBody: string): ConnectorResult<GraphNotification[]> {
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch {
    return err({ code: 'Validation', message: 'the notification body is not JSON' });
  }
  const parsed = notificationBody.safeParse(json);
  if (!parsed.success)
    return err({
      code: 'Validation',
      message: `not a Graph notification: ${parsed.error.issues[0]?.message}`,
    });
  return ok(parsed.data.value);
}

/** The subscription ids a notification POST names (the webhook route looks their secrets up). */
export function graphNotificationSubscriptions(rawBody: string): ConnectorResult<string[]> {
  const items = readGraphNotifications(rawBody);
  return items.ok ? ok([...new Set(items.value.map((i) => i.subscriptionId))]) : items;
}

/**
 * Graph signs nothing: a notification proves itself by the `clientState` we gave the
 * subscription, which only Graph and we know. Every item must name one of `secrets.channels`
 * (subscription id and clientState), compared in constant time against every channel so the
 * timing says nothing about which one matched.
 */
export function verifyGraphNotification(
  request: WebhookRequest,
  secrets: WebhookSecrets,
): ConnectorResult<void> {
  if (request.method.toUpperCase() !== 'POST')
    return err({ code: 'Validation', message: `Graph posts its notifications (not ${request.method})` });
  const items = readGraphNotifications(request.rawBody);
  if (!items.ok) return items;
  const channels = secrets.channels ?? [];
  for (const item of items.value) {
    let matched = false;
    for (const channel of channels) {
      const idOk = constantTimeEqual(item.subscriptionId, channel.id);
      const stateOk = constantTimeEqual(item.clientState ?? '', channel.token);
      if (idOk && stateOk && channel.token !== '') matched = true;
    }
    if (!matched) return err({ code: 'Validation', message: 'unknown subscription or wrong clientState' });
  }
  return ok(undefined);
}

/**
 * A verified notification as what it asks of us: Graph's notifications are hints (the truth is
 * read through delta), so every one is a pull; a lifecycle notification also asks for the
 * subscription to be renewed (`reauthorizationRequired`) or made again (`subscriptionRemoved`);
 * `missed` means notifications were lost, which the pull catches up on.
 */
export function parseGraphNotification(
  request: WebhookRequest,
  area: string,
): ConnectorResult<WebhookOutcome> {
  const items = readGraphNotifications(request.rawBody);
  if (!items.ok) return items;
  const lifecycle = new Set(items.value.map((i) => i.lifecycleEvent).filter((e) => e !== undefined));
  const subscription = lifecycle.has('subscriptionRemoved')
    ? ('recreate' as const)
    : lifecycle.has('reauthorizationRequired')
      ? ('reauthorize' as const)
      : undefined;
  const changeTypes = [
    ...new Set(
      items.value.flatMap((i) => (i.lifecycleEvent === undefined ? [i.changeType ?? 'change'] : [])),
    ),
  ].sort();
  const reason =
    lifecycle.size > 0
      ? `${area} subscription ${[...lifecycle].join(', ')}`
      : `${area} ${changeTypes.join(',')}`;
  return ok({ kind: 'pull', reason, ...(subscription ? { subscription } : {}) });
}
