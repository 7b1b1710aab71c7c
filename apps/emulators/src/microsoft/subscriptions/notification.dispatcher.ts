import type { FaultRegistry } from '../../common/faults';

/** How notifications are delivered; the control API shortens them for tests. */
export interface DeliverySettings {
  /** Notifications for one URL within this window go out in one POST. */
  batchWindowMs: number;
  /** Graph wants a 2xx within 3 s, else counts the delivery as failed. */
  responseTimeoutMs: number;
  /** The first retry's delay; each next one doubles, up to a minute. */
  retryBaseMs: number;
  /** How long a failing delivery is retried (Graph: up to 4 hours). */
  retryForMs: number;
}

export const DEFAULT_DELIVERY: DeliverySettings = {
  batchWindowMs: 50,
  responseTimeoutMs: 3_000,
  retryBaseMs: 1_000,
  retryForMs: 4 * 3600_000,
};

export interface DeliveryRecord {
  at: string;
  url: string;
  /** How many notifications the POST carried (0 for a dropped one). */
  count: number;
  /** The receiver's status, 'dropped' (drop-webhooks fault), 'failed' (no answer in time), 'gave-up'. */
  outcome: number | 'dropped' | 'failed' | 'gave-up';
}

const MAX_RETRY_DELAY_MS = 60_000;
const MAX_RECORDS = 1000;

/**
 * Posts change and lifecycle notifications over real HTTP: batched per URL, retried with
 * doubling delays while the receiver fails, the microsoft drop-webhooks and
 * duplicate-webhooks faults applied per notification; `reset` stops every timer.
 */
export class NotificationDispatcher {
  private readonly pending = new Map<string, unknown[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<AbortController>();
  private readonly records: DeliveryRecord[] = [];
  private stopped = false;

  constructor(
    private readonly faults: FaultRegistry,
    private readonly now: () => number,
    readonly settings: DeliverySettings = { ...DEFAULT_DELIVERY },
  ) {}

  /** Queues one notification for `url`; `account` is the user principal name the faults match. */
  send(url: string, account: string, notification: unknown): void {
    if (this.faults.take('microsoft', 'drop-webhooks', account)) {
      this.record(url, 0, 'dropped');
      return;
    }
    const copies = this.faults.take('microsoft', 'duplicate-webhooks', account) ? 2 : 1;
    let queue = this.pending.get(url);
    if (!queue) {
      queue = [];
      this.pending.set(url, queue);
      this.later(this.settings.batchWindowMs, () => this.flush(url));
    }
    for (let i = 0; i < copies; i++) queue.push(notification);
  }

  /**
   * The validation handshake: POST `url?validationToken=…` as text/plain; the endpoint must
   * answer 200 with the token, as text/plain, within `timeoutMs`.
   */
  async validate(url: string, token: string, timeoutMs: number): Promise<'ok' | 'timeout' | 'refused'> {
    const target = new URL(url);
    target.searchParams.set('validationToken', token);
    const answer = await this.post(target.toString(), 'text/plain; charset=utf-8', '', timeoutMs, true);
    if (answer === 'failed') return 'timeout';
    const textual = answer.contentType.toLowerCase().startsWith('text/plain');
    return answer.status === 200 && textual && answer.body === token ? 'ok' : 'refused';
  }

  deliveries(): DeliveryRecord[] {
    return [...this.records];
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
    this.pending.clear();
  }

  private flush(url: string): void {
    const value = this.pending.get(url) ?? [];
    this.pending.delete(url);
    if (value.length > 0) void this.deliver(url, JSON.stringify({ value }), value.length, this.now());
  }

  private async deliver(
    url: string,
    body: string,
    count: number,
    firstTry: number,
    attempt = 0,
  ): Promise<void> {
    const { responseTimeoutMs, retryBaseMs, retryForMs } = this.settings;
    const answer = await this.post(url, 'application/json; charset=utf-8', body, responseTimeoutMs, false);
    if (this.stopped) return;
    const outcome = answer === 'failed' ? 'failed' : answer.status;
    this.record(url, count, outcome);
    if (typeof outcome === 'number' && outcome >= 200 && outcome < 300) return;
    const delay = Math.min(retryBaseMs * 2 ** attempt, MAX_RETRY_DELAY_MS);
    if (this.now() + delay - firstTry > retryForMs) {
      this.record(url, count, 'gave-up');
      return;
    }
    this.later(delay, () => void this.deliver(url, body, count, firstTry, attempt + 1));
  }

  private async post(
    url: string,
    contentType: string,
    body: string,
    timeoutMs: number,
    readBody: boolean,
  ): Promise<{ status: number; contentType: string; body: string } | 'failed'> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
        signal: controller.signal,
      });
      const text = await res.text();
      return {
        status: res.status,
        contentType: res.headers.get('content-type') ?? '',
        body: readBody ? text : '',
      };
    } catch {
      return 'failed';
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }

  private later(ms: number, run: () => void): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  private record(url: string, count: number, outcome: DeliveryRecord['outcome']): void {
    this.records.push({ at: new Date(this.now()).toISOString(), url, count, outcome });
    if (this.records.length > MAX_RECORDS) this.records.splice(0, this.records.length - MAX_RECORDS);
  }
}
