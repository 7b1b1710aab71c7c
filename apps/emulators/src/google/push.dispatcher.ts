import type { FaultRegistry } from '../common/faults';
import { requestKeptAlive } from '../common/kept-alive';

export interface PushDelivery {
  /** Deliveries with the same key go out one after another, in order (a channel, a mailbox). */
  key: string;
  /** The Google user the push is about: the account the webhook faults are matched on. */
  account: string;
  kind: 'calendar' | 'gmail';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Calendar retries only 5xx; Pub/Sub push redelivers on any non-2xx. */
  retryOn: 'server-errors' | 'any-failure';
}

export interface DeliveryRecord {
  at: string;
  kind: PushDelivery['kind'];
  account: string;
  url: string;
  headers: Record<string, string>;
  /** The receiver's status, 'dropped' (drop-webhooks fault) or 'failed' (no answer). */
  outcome: number | 'dropped' | 'failed';
}

const RETRY_DELAYS_MS = [250, 1000];
const RESPONSE_TIMEOUT_MS = 5000;
/** The delivery log keeps the latest entries only, so a long demo does not grow without bound. */
const MAX_RECORDS = 1000;

/**
 * Sends watch notifications and Gmail pushes over real HTTP, applying the drop-webhooks
 * and duplicate-webhooks faults, retrying a little, and forgetting everything on reset.
 */
export class PushDispatcher {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly sleeping = new Map<NodeJS.Timeout, () => void>();
  private readonly inFlight = new Set<AbortController>();
  private readonly records: DeliveryRecord[] = [];
  private generation = 0;

  constructor(
    private readonly faults: FaultRegistry,
    private readonly now: () => number,
  ) {}

  send(delivery: PushDelivery): void {
    if (this.faults.take('google', 'drop-webhooks', delivery.account)) {
      this.record(delivery, 'dropped');
      return;
    }
    const copies = this.faults.take('google', 'duplicate-webhooks', delivery.account) ? 2 : 1;
    const generation = this.generation;
    for (let i = 0; i < copies; i++) {
      const previous = this.chains.get(delivery.key) ?? Promise.resolve();
      const next = previous.then(() => this.deliver(delivery, generation));
      this.chains.set(delivery.key, next);
      void next.finally(() => {
        if (this.chains.get(delivery.key) === next) this.chains.delete(delivery.key);
      });
    }
  }

  deliveries(): DeliveryRecord[] {
    return [...this.records];
  }

  reset(): void {
    this.generation++;
    for (const [timer, wake] of this.sleeping) {
      clearTimeout(timer);
      wake();
    }
    this.sleeping.clear();
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
    this.chains.clear();
    this.records.length = 0;
  }

  private async deliver(delivery: PushDelivery, generation: number): Promise<void> {
    for (let attempt = 0; attempt <= RETRY_DELAYS_MS.length; attempt++) {
      if (generation !== this.generation) return;
      const outcome = await this.post(delivery);
      if (generation !== this.generation) return;
      this.record(delivery, outcome);
      const retry =
        outcome === 'failed' ||
        (typeof outcome === 'number' &&
          (delivery.retryOn === 'any-failure' ? outcome >= 300 : [500, 502, 503, 504].includes(outcome)));
      const delay = RETRY_DELAYS_MS[attempt];
      if (!retry || delay === undefined) return;
      await this.sleep(delay);
    }
  }

  private async post(delivery: PushDelivery): Promise<number | 'failed'> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(), RESPONSE_TIMEOUT_MS);
    try {
      const { status } = await requestKeptAlive(delivery.url, {
        method: 'POST',
        headers: delivery.headers,
        ...(delivery.body === undefined ? {} : { body: delivery.body }),
        signal: controller.signal,
      });
      return status;
    } catch {
      return 'failed';
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping.delete(timer);
        resolve();
      }, ms);
      this.sleeping.set(timer, resolve);
    });
  }

  private record(delivery: PushDelivery, outcome: DeliveryRecord['outcome']): void {
    this.records.push({
      at: new Date(this.now()).toISOString(),
      kind: delivery.kind,
      account: delivery.account,
      url: delivery.url,
      headers: delivery.headers,
      outcome,
    });
    if (this.records.length > MAX_RECORDS) this.records.splice(0, this.records.length - MAX_RECORDS);
  }
}
