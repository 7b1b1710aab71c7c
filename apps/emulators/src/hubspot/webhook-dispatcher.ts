import type { EmulatorContext } from '../common/context';
import { requestKeptAlive } from '../common/kept-alive';
import { OBJECT_TYPES } from './object-types';
import type { CrmChange, Portal, WebhookSubscription } from './portal';
import { webhookHeaders } from './webhook-signature';

/** One event as HubSpot posts it (field order as HubSpot sends them). */
export interface WebhookEvent {
  eventId: number;
  subscriptionId: number;
  portalId: number;
  appId: number;
  occurredAt: number;
  subscriptionType: string;
  attemptNumber: number;
  objectId?: number;
  changeFlag?: 'CREATED' | 'DELETED';
  changeSource: string;
  sourceId: string;
  propertyName?: string;
  propertyValue?: string;
  primaryObjectId?: number;
  mergedObjectIds?: number[];
  newObjectId?: number;
  numberOfPropertiesMoved?: number;
  associationType?: string;
  fromObjectId?: number;
  toObjectId?: number;
  associationRemoved?: boolean;
  isPrimaryAssociation?: boolean;
}

/** What happened to one POST, kept for the control API and for debugging tests. */
export interface DeliveryRecord {
  /** When the attempt ended (answered, failed or dropped). */
  at: string;
  /** When the POST left the emulator (absent for a batch dropped unsent). */
  sentAt?: string;
  url: string | null;
  attemptNumber: number;
  eventIds: number[];
  outcome: 'delivered' | 'failed' | 'dropped';
  status?: number;
  error?: string;
  /** A second copy sent because of a duplicate-webhooks fault. */
  duplicate?: boolean;
}

/**
 * Turns CRM changes into webhook events and posts them to the portal's target URL:
 * gathered into batches of at most 100, shuffled, signed, retried with backoff on a
 * non-2xx answer, a connection failure or a slow answer.
 */
export class WebhookDispatcher {
  private readonly queues = new Map<number, WebhookEvent[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inflight = new Set<AbortController>();
  private readonly lastEventId = new Map<number, number>();
  private readonly deliveries = new Map<number, DeliveryRecord[]>();
  /** Bumped by reset so callbacks from before it do nothing. */
  private generation = 0;

  constructor(
    private readonly ctx: EmulatorContext,
    private readonly portalById: (portalId: number) => Portal | undefined,
  ) {}

  readonly onChange = (portal: Portal, change: CrmChange): void => {
    if (!portal.settings.webhookUrl) return;
    const events = this.toEvents(portal, change);
    if (events.length === 0) return;
    const queue = this.queues.get(portal.portalId);
    if (queue) {
      queue.push(...events);
      return;
    }
    this.queues.set(portal.portalId, events);
    // Held events wait for `release`.
    if (!portal.settings.webhookTiming.held)
      this.later(portal.settings.webhookTiming.batchDelayMs, () => this.flush(portal.portalId));
  };

  /** Sends what gathered while the portal's webhooks were held. */
  release(portalId: number): void {
    if (this.queues.has(portalId)) this.flush(portalId);
  }

  deliveriesOf(portalId: number): DeliveryRecord[] {
    return this.deliveries.get(portalId) ?? [];
  }

  /** Events waiting for their batch, and POSTs in flight or waiting for a retry. */
  get pending(): number {
    let queued = 0;
    for (const q of this.queues.values()) queued += q.length;
    return queued + this.timers.size + this.inflight.size;
  }

  forgetPortal(portalId: number): void {
    this.queues.delete(portalId);
    this.deliveries.delete(portalId);
    this.lastEventId.delete(portalId);
  }

  reset(): void {
    this.generation++;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const c of this.inflight) c.abort();
    this.inflight.clear();
    this.queues.clear();
    this.lastEventId.clear();
    this.deliveries.clear();
  }

  private flush(portalId: number): void {
    const queue = this.queues.get(portalId);
    this.queues.delete(portalId);
    const portal = this.portalById(portalId);
    if (!queue || !portal) return;
    const size = portal.settings.webhookTiming.maxBatchSize;
    for (let i = 0; i < queue.length; i += size) {
      const batch = portal.eventPrng.shuffle(queue.slice(i, i + size));
      if (this.ctx.faults.take('hubspot', 'drop-webhooks', portalId)) {
        this.record(portalId, {
          url: portal.settings.webhookUrl,
          attemptNumber: 0,
          batch,
          outcome: 'dropped',
        });
        continue;
      }
      void this.deliver(portalId, batch, 0, false);
      if (this.ctx.faults.take('hubspot', 'duplicate-webhooks', portalId)) {
        // The same events again, in another order, as HubSpot's at-least-once delivery can.
        void this.deliver(portalId, portal.eventPrng.shuffle(batch), 0, true);
      }
    }
  }

  private async deliver(
    portalId: number,
    batch: WebhookEvent[],
    attemptNumber: number,
    duplicate: boolean,
  ): Promise<void> {
    const generation = this.generation;
    const portal = this.portalById(portalId);
    if (!portal) return;
    const { webhookUrl: url, clientSecret, webhookTiming: timing } = portal.settings;
    if (!url) {
      this.record(portalId, { url, attemptNumber, batch, outcome: 'dropped', duplicate });
      return;
    }
    const body = JSON.stringify(batch.map((e) => ({ ...e, attemptNumber })));
    const sentAt = new Date(this.ctx.now()).toISOString();
    const controller = new AbortController();
    this.inflight.add(controller);
    const timeout = setTimeout(
      () => controller.abort(new Error(`no answer within ${timing.timeoutMs} ms`)),
      timing.timeoutMs,
    );
    let status: number | undefined;
    let error: string | undefined;
    try {
      ({ status } = await requestKeptAlive(url, {
        method: 'POST',
        headers: webhookHeaders(clientSecret, url, body, this.ctx.now()),
        body,
        signal: controller.signal,
      }));
    } catch (e) {
      const reason = controller.signal.aborted ? controller.signal.reason : e;
      error = reason instanceof Error ? reason.message : String(reason);
    } finally {
      clearTimeout(timeout);
      this.inflight.delete(controller);
    }
    if (generation !== this.generation) return;
    const delivered = status !== undefined && status >= 200 && status < 300;
    this.record(portalId, {
      url,
      attemptNumber,
      batch,
      outcome: delivered ? 'delivered' : 'failed',
      duplicate,
      sentAt,
      ...(status === undefined ? {} : { status }),
      ...(error === undefined ? {} : { error }),
    });
    if (!delivered && attemptNumber < timing.maxRetries) {
      this.later(timing.retryBaseMs * 2 ** attemptNumber, () => {
        void this.deliver(portalId, batch, attemptNumber + 1, duplicate);
      });
    }
  }

  private later(ms: number, fn: () => void): void {
    const generation = this.generation;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (generation === this.generation) fn();
    }, ms);
    this.timers.add(timer);
  }

  private record(
    portalId: number,
    d: Omit<DeliveryRecord, 'at' | 'eventIds'> & { batch: WebhookEvent[] },
  ): void {
    const { batch, ...rest } = d;
    const list = this.deliveries.get(portalId) ?? [];
    list.push({ at: new Date(this.ctx.now()).toISOString(), eventIds: batch.map((e) => e.eventId), ...rest });
    this.deliveries.set(portalId, list);
  }

  private toEvents(portal: Portal, change: CrmChange): WebhookEvent[] {
    const fromType = change.kind === 'associationChange' ? change.delta.from : change.type;
    const toType = change.kind === 'associationChange' ? change.delta.to : undefined;
    if (!OBJECT_TYPES[fromType].webhooks || (toType && !OBJECT_TYPES[toType].webhooks)) return [];
    const subscriptionType = `${OBJECT_TYPES[fromType].singular}.${change.kind}`;
    const matching = portal.settings.subscriptions.filter((s) => matches(s, subscriptionType, change));
    return matching.map((subscription) =>
      eventOf(change, {
        eventId: this.nextEventId(portal),
        subscriptionId: subscription.id,
        portalId: portal.portalId,
        appId: portal.settings.appId,
        occurredAt: change.at,
        subscriptionType,
        attemptNumber: 0,
      }),
    );
  }

  private nextEventId(portal: Portal): number {
    const last = this.lastEventId.get(portal.portalId) ?? portal.eventPrng.int(100_000_000, 900_000_000);
    const next = last + portal.eventPrng.int(1, 9);
    this.lastEventId.set(portal.portalId, next);
    return next;
  }
}

function matches(subscription: WebhookSubscription, subscriptionType: string, change: CrmChange): boolean {
  if (!subscription.active || subscription.subscriptionType !== subscriptionType) return false;
  if (change.kind !== 'propertyChange' || subscription.propertyName === undefined) return true;
  return subscription.propertyName === change.propertyName;
}

type EventHead = Pick<
  WebhookEvent,
  'eventId' | 'subscriptionId' | 'portalId' | 'appId' | 'occurredAt' | 'subscriptionType' | 'attemptNumber'
>;

/** The fields each kind of change adds to the common head. */
function eventOf(change: CrmChange, head: EventHead): WebhookEvent {
  const source = { changeSource: change.source.sourceType, sourceId: change.source.sourceId };
  switch (change.kind) {
    case 'creation':
    case 'deletion':
      return {
        ...head,
        objectId: Number(change.objectId),
        changeFlag: change.kind === 'creation' ? 'CREATED' : 'DELETED',
        ...source,
      };
    case 'propertyChange':
      return {
        ...head,
        objectId: Number(change.objectId),
        ...source,
        propertyName: change.propertyName,
        propertyValue: change.propertyValue,
      };
    case 'merge':
      return {
        ...head,
        objectId: Number(change.objectId),
        ...source,
        primaryObjectId: Number(change.objectId),
        mergedObjectIds: change.mergedObjectIds.map(Number),
        newObjectId: Number(change.objectId),
        numberOfPropertiesMoved: change.numberOfPropertiesMoved,
      };
    case 'associationChange': {
      const { delta } = change;
      return {
        ...head,
        ...source,
        associationType:
          `${OBJECT_TYPES[delta.from].singular}_TO_${OBJECT_TYPES[delta.to].singular}`.toUpperCase(),
        fromObjectId: Number(delta.fromId),
        toObjectId: Number(delta.toId),
        associationRemoved: delta.removed,
        isPrimaryAssociation: delta.primary,
      };
    }
  }
}
