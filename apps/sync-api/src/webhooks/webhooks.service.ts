import { HttpException, HttpStatus, Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import {
  type Connector,
  gmailConnector,
  googleCalendarConnector,
  graphNotificationSubscriptions,
  hubspotConnector,
  parseGraphNotification,
  readGraphNotifications,
  verifyGraphNotification,
  type WebhookRequest,
} from '@syncline/connectors';
import { Keyring, type ProviderKey, type SourceChangeInput } from '@syncline/core';
import { ChangeLog } from '@syncline/log';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { CodedHttpException } from '../common/api-errors';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { ConnectionStatus } from '../connections/connections.schemas';
import { PullQueue } from '../infra/pull-queue.module';
import { MetricsService } from '../metrics/metrics.service';
import { nestedDeeperThan } from './raw-body';
import { type PushSubscriptionRow, type WebhookConnection, WebhooksRepository } from './webhooks.repository';
import type { WebhookAck, WebhookOutcomeLabel } from './webhooks.schemas';

/** Associated data of a watch channel's token: binds the ciphertext to its row. */
export const pushSubscriptionAad = (id: string): string => `push-subscription:${id}`;

// A paused or disconnected connection takes nothing in; a pull also needs working credentials.
// Nothing of a paused one is lost for that: its webhook is still answered 2xx (a provider
// retries errors), and the pull queued on resume reads from the cursor it kept, which covers
// every change (and delete) a webhook would have carried. Appending them instead would let
// the merge take in a connection an admin paused.
const TAKES_CHANGES: ReadonlySet<ConnectionStatus> = new Set([
  'pending',
  'backfilling',
  'live',
  'needs_reauth',
  'error',
]);
const TAKES_PULLS: ReadonlySet<ConnectionStatus> = new Set(['pending', 'backfilling', 'live', 'error']);

// Only a connection whose credentials the provider named as its account takes anything in: a
// portal id or an address is no secret, so a connection claiming one proves nothing by itself.
// An unproven one (made before proofs, not yet proven by the workers' first pull) loses
// nothing by waiting: that pull reads from its cursor.
const takesChanges = (c: WebhookConnection): boolean => c.proven && TAKES_CHANGES.has(c.status);
const takesPulls = (c: WebhookConnection): boolean => c.proven && TAKES_PULLS.has(c.status);

/** The Microsoft 365 products, each with its own webhook route, and how a pull's reason names it. */
export const MICROSOFT_AREAS = {
  'microsoft-calendar': 'Outlook Calendar',
  'microsoft-mail': 'Outlook Mail',
  'microsoft-todo': 'Microsoft To Do',
} as const satisfies Partial<Record<ProviderKey, string>>;
export type MicrosoftProvider = keyof typeof MICROSOFT_AREAS;

/** Deeper than any provider's notification nests (HubSpot's are 2 deep, a Gmail push 3, Graph's 3). */
const MAX_BODY_DEPTH = 32;

const invalidSignature = (message: string) =>
  new CodedHttpException(HttpStatus.UNAUTHORIZED, 'invalid_signature', message);
const invalidPayload = (message: string) =>
  new CodedHttpException(HttpStatus.BAD_REQUEST, 'invalid_payload', message);

/**
 * Webhooks and push notifications: verified by the provider's connector (constant time),
 * then either appended to the change log (HubSpot carries the changes) or turned into a
 * pull of the connection (Google only says that something changed). The answer goes out
 * once the append has committed, so an acknowledged change is never lost; the log drops
 * redeliveries at its door, so a provider's retry is harmless.
 */
@Injectable()
export class WebhooksService {
  constructor(
    @Inject(WebhooksRepository) private readonly repository: WebhooksRepository,
    @Inject(ChangeLog) private readonly log: ChangeLog,
    @Inject(PullQueue) private readonly pulls: PullQueue,
    @Inject(Keyring) private readonly keyring: Keyring,
    @Inject(MetricsService) private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectPinoLogger(WebhooksService.name) private readonly logger: PinoLogger,
  ) {}

  hubspot(request: WebhookRequest): Promise<WebhookAck> {
    return this.counted('hubspot', async () => {
      // One app-level secret signs every portal's events, so the whole batch is verified at once.
      const secret = this.config.HUBSPOT_CLIENT_SECRET;
      if (!secret) this.logger.warn('HUBSPOT_CLIENT_SECRET is not set: every HubSpot webhook is refused');
      const verified = hubspotConnector.verifyWebhook(request, secret ? { clientSecret: secret } : {});
      if (!verified.ok) throw invalidSignature(verified.error.message);
      refuseDeepBody(request.rawBody);

      const byPortal = eventsByPortal(request.rawBody);
      const connections = (await this.repository.hubspotConnections([...byPortal.keys()])).filter(
        takesChanges,
      );
      const changes: SourceChangeInput[] = [];
      for (const connection of connections) {
        const events = byPortal.get(connection.externalAccountId) ?? [];
        const parsed = hubspotConnector.parseWebhook(
          { ...request, rawBody: JSON.stringify(events) },
          {
            connectionId: connection.id,
            workspaceId: connection.workspaceId,
            fieldMappings: connection.fieldMappings,
            ...(this.config.HUBSPOT_APP_ID ? { appId: this.config.HUBSPOT_APP_ID } : {}),
          },
        );
        if (!parsed.ok) throw invalidPayload(parsed.error.message);
        if (parsed.value.kind === 'changes') changes.push(...parsed.value.changes);
      }
      const unknownPortals = [...byPortal.keys()].filter(
        (portal) => !connections.some((c) => c.externalAccountId === portal),
      );
      if (unknownPortals.length > 0)
        this.logger.info(
          { portals: unknownPortals },
          'hubspot events for portals without a connection ignored',
        );
      if (connections.length === 0) return ack('ignored', 0, 0, 0);
      const newChanges = await this.append('hubspot', changes);
      const outcome = changes.length > 0 && newChanges === 0 ? 'duplicate' : 'appended';
      return ack(outcome, connections.length, changes.length, newChanges);
    });
  }

  googleCalendar(request: WebhookRequest): Promise<WebhookAck> {
    return this.counted('google-calendar', async () => {
      const channelId = header(request, 'x-goog-channel-id');
      if (!channelId) throw invalidPayload('no X-Goog-Channel-ID header');
      const subscription = await this.repository.pushSubscription(channelId);
      const channels = subscription ? this.channels([subscription]) : [];
      // Verified even when the channel is unknown (against nothing), so both fail alike.
      const verified = googleCalendarConnector.verifyWebhook(request, { channels });
      if (!verified.ok || !subscription) throw invalidSignature('unknown channel or wrong channel token');
      return this.pull(googleCalendarConnector, request, [
        await this.repository.connection(subscription.connectionId),
      ]);
    });
  }

  gmail(request: WebhookRequest): Promise<WebhookAck> {
    return this.counted('gmail', async () => {
      const token = this.config.GMAIL_PUSH_TOKEN;
      if (!token) this.logger.warn('GMAIL_PUSH_TOKEN is not set: every Gmail push is refused');
      const verified = gmailConnector.verifyWebhook(request, token ? { pushBearerToken: token } : {});
      if (!verified.ok) throw invalidSignature(verified.error.message);
      refuseDeepBody(request.rawBody);
      const emailAddress = gmailPushAddress(request.rawBody);
      if (emailAddress === undefined)
        throw invalidPayload('not a Gmail push: no message.data with emailAddress');
      return this.pull(gmailConnector, request, await this.repository.gmailConnections(emailAddress));
    });
  }

  /**
   * Microsoft Graph change and lifecycle notifications (one route per product). A POST may
   * name several subscriptions: each item must carry the clientState its subscription was
   * made with (an unknown subscription and a wrong clientState are refused alike, 401). Every
   * connection named gets a pull: Graph's notifications are hints, the truth is read by delta.
   */
  microsoft(provider: MicrosoftProvider, request: WebhookRequest): Promise<WebhookAck> {
    return this.counted(provider, async () => {
      refuseDeepBody(request.rawBody);
      const named = graphNotificationSubscriptions(request.rawBody);
      if (!named.ok) throw invalidPayload(named.error.message);
      const { subscriptions, connections } = await this.repository.providerSubscriptions(
        provider,
        named.value,
      );
      const verified = verifyGraphNotification(request, { channels: this.channels(subscriptions) });
      if (!verified.ok) throw invalidSignature('unknown subscription or wrong clientState');
      const items = readGraphNotifications(request.rawBody);
      if (!items.ok) throw invalidPayload(items.error.message);

      const reasons = new Map<string, string>();
      const renew: string[] = [];
      for (const subscription of subscriptions) {
        const own = items.value.filter((item) => item.subscriptionId === subscription.id);
        if (own.length === 0) continue;
        const parsed = parseGraphNotification(
          { ...request, rawBody: JSON.stringify({ value: own }) },
          MICROSOFT_AREAS[provider],
        );
        if (!parsed.ok) throw invalidPayload(parsed.error.message);
        if (parsed.value.kind !== 'pull') continue;
        if (parsed.value.subscription) renew.push(subscription.id);
        if (!reasons.has(subscription.connectionId))
          reasons.set(subscription.connectionId, parsed.value.reason);
      }
      // Graph asked for a subscription to be reauthorized (`reauthorizationRequired`) or made
      // again (`subscriptionRemoved`): it is made due now, so the workers' renewal (which
      // replaces every subscription expiring within its horizon) subscribes the connection
      // again on its next pass and retires this one. The pull below still runs: a lifecycle
      // notification may mean changes were missed.
      if (renew.length > 0) {
        const moved = await this.repository.expireSubscriptions(renew, new Date());
        this.logger.info(
          { provider, subscriptionIds: renew, moved },
          'graph asked for subscriptions to be renewed',
        );
      }
      const pulled = connections.filter((c) => reasons.has(c.id) && takesPulls(c));
      for (const connection of pulled) {
        await this.pulls.enqueue(connection.id, reasons.get(connection.id) ?? MICROSOFT_AREAS[provider]);
      }
      if (pulled.length === 0) {
        this.logger.info({ provider }, 'notification for no active connection ignored');
        return ack('ignored', 0, 0, 0);
      }
      return ack('pull_enqueued', pulled.length, 0, 0);
    });
  }

  /** Graph's validation handshake was answered (the route echoes the token; nothing else is done). */
  graphValidation(provider: MicrosoftProvider): void {
    this.metrics.webhookReceived(provider, 'validated');
  }

  /**
   * The subscriptions' ids and tokens, opened. A token sealed with a key no longer in the
   * keyring cannot be checked: that subscription is left out, so its notifications are refused.
   */
  private channels(
    subscriptions: readonly PushSubscriptionRow[],
  ): { id: string; token: string; resourceId?: string }[] {
    const channels: { id: string; token: string; resourceId?: string }[] = [];
    for (const subscription of subscriptions) {
      try {
        const token = this.keyring.open(subscription.token, pushSubscriptionAad(subscription.id));
        channels.push({
          id: subscription.id,
          token,
          ...(subscription.resourceId ? { resourceId: subscription.resourceId } : {}),
        });
      } catch (error) {
        this.logger.error(
          { err: error, subscriptionId: subscription.id },
          'cannot open a push subscription token',
        );
      }
    }
    return channels;
  }

  /** Google: the connector checks the notification's shape; each connection it is for gets a pull. */
  private async pull(
    connector: Connector,
    request: WebhookRequest,
    candidates: readonly (WebhookConnection | null)[],
  ): Promise<WebhookAck> {
    const connections = candidates.filter((c): c is WebhookConnection => c !== null && takesPulls(c));
    let enqueued = 0;
    for (const connection of connections) {
      const parsed = connector.parseWebhook(request, {
        connectionId: connection.id,
        workspaceId: connection.workspaceId,
      });
      if (!parsed.ok) throw invalidPayload(parsed.error.message);
      if (parsed.value.kind === 'pull') {
        await this.pulls.enqueue(connection.id, parsed.value.reason);
        enqueued++;
      } else {
        await this.append(connector.provider, parsed.value.changes);
      }
    }
    if (connections.length === 0) {
      // Still a 2xx: a provider retries an error, and a notification for a connection we
      // dropped or paused will never become deliverable.
      this.logger.info('notification for no active connection ignored');
      return ack('ignored', 0, 0, 0);
    }
    return ack(enqueued > 0 ? 'pull_enqueued' : 'appended', connections.length, 0, 0);
  }

  /**
   * Appends in one batch and returns how many changes were new. The log refuses a whole
   * batch for one bad change; that change is dead-lettered and the rest appended, so one
   * poison event cannot make the provider retry (and lose) its whole batch.
   */
  private async append(provider: ProviderKey, changes: readonly SourceChangeInput[]): Promise<number> {
    let batch = [...changes];
    for (;;) {
      const result = await this.log.append(batch);
      if (result.ok) return result.value.filter((c) => c.isNew).length;
      const { error } = result;
      if (error.code === 'Closed') throw new ServiceUnavailableException('shutting down; deliver again');
      const poison = batch[error.index];
      if (poison === undefined) throw new Error(`change log refused the batch: ${error.message}`);
      this.logger.error(
        { connectionId: poison.connectionId, eventKey: poison.eventKey, reason: error.message },
        'webhook change refused by the log; dead-lettered',
      );
      await this.repository.deadLetter(`webhook:${provider}`, poison, error.message);
      batch = batch.filter((_, index) => index !== error.index);
    }
  }

  private async counted(provider: ProviderKey, run: () => Promise<WebhookAck>): Promise<WebhookAck> {
    try {
      const result = await run();
      this.metrics.webhookReceived(provider, result.outcome);
      return result;
    } catch (error) {
      this.metrics.webhookReceived(provider, outcomeOf(error));
      throw error;
    }
  }
}

function ack(
  outcome: WebhookAck['outcome'],
  connections: number,
  changes: number,
  newChanges: number,
): WebhookAck {
  return { outcome, connections, changes, newChanges };
}

function outcomeOf(error: unknown): WebhookOutcomeLabel {
  if (
    error instanceof CodedHttpException &&
    (error.code === 'invalid_signature' || error.code === 'invalid_payload')
  )
    return error.code;
  if (error instanceof HttpException && error.getStatus() < 500) return 'invalid_payload';
  return 'error';
}

/** A signed body nested absurdly deep is no notification: refused before it is parsed. */
function refuseDeepBody(rawBody: string): void {
  if (nestedDeeperThan(rawBody, MAX_BODY_DEPTH))
    throw invalidPayload(`the body is nested deeper than ${MAX_BODY_DEPTH} levels`);
}

function header(request: WebhookRequest, name: string): string | undefined {
  const value = request.headers[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * HubSpot's batch is a JSON array of events, each with the `portalId` it belongs to; one
 * batch may mix portals. Events without a portal cannot be placed and are left out.
 */
function eventsByPortal(rawBody: string): Map<string, unknown[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw invalidPayload('HubSpot webhook body is not JSON');
  }
  if (!Array.isArray(parsed)) throw invalidPayload('HubSpot webhook body is not a JSON array of events');
  const byPortal = new Map<string, unknown[]>();
  for (const event of parsed) {
    const portalId =
      typeof event === 'object' && event !== null ? (event as { portalId?: unknown }).portalId : undefined;
    if (typeof portalId !== 'number' && typeof portalId !== 'string') continue;
    const key = String(portalId);
    const events = byPortal.get(key) ?? [];
    events.push(event);
    byPortal.set(key, events);
  }
  return byPortal;
}

/** The mailbox of a Pub/Sub push: `message.data` is base64(url) JSON `{ emailAddress, historyId }`. */
function gmailPushAddress(rawBody: string): string | undefined {
  try {
    const body = JSON.parse(rawBody) as { message?: { data?: unknown } };
    if (typeof body.message?.data !== 'string') return undefined;
    const data = JSON.parse(Buffer.from(body.message.data, 'base64url').toString('utf8')) as {
      emailAddress?: unknown;
      historyId?: unknown;
    };
    if (typeof data.emailAddress !== 'string' || data.emailAddress === '' || data.historyId === undefined)
      return undefined;
    return data.emailAddress;
  } catch {
    return undefined;
  }
}
