import { isPlainObject } from './calendar-event';
import { googleErrors } from './google-errors';
import { signGoogleIdToken } from './google-id-token';
import type { SeededRandom } from './google-ids';
import type { PushDispatcher } from './push.dispatcher';

const WATCH_TTL_MS = 7 * 24 * 3600_000;
/** Gmail sends at most one notification per second per user; changes in between are coalesced. */
const MIN_PUSH_INTERVAL_MS = 1000;
/** The service account Pub/Sub signs push requests as; receivers can check the token's email claim. */
export const PUSH_SERVICE_ACCOUNT = 'gmail-push@syncline-emulator.iam.gserviceaccount.com';

interface MailboxWatch {
  topicName: string;
  labelIds: string[];
  behavior: 'include' | 'exclude';
  expiration: number;
}

interface Pacing {
  lastSentAt: number;
  timer?: NodeJS.Timeout;
}

export interface GmailWatchDeps {
  rng: SeededRandom;
  now: () => number;
  dispatcher: PushDispatcher;
  /** Where the user's Pub/Sub push subscription delivers (set through the control API). */
  pushUrlOf: (email: string) => string | undefined;
  historyIdOf: (email: string) => number;
}

/**
 * users.watch and the Pub/Sub push it causes: `{ message: { data, messageId, publishTime },
 * subscription }` with an OIDC bearer token whose audience is the push URL.
 */
export class GmailWatch {
  private readonly watches = new Map<string, MailboxWatch>();
  private readonly pacing = new Map<string, Pacing>();
  private pubsubMessageId: number;

  constructor(private readonly deps: GmailWatchDeps) {
    this.pubsubMessageId = deps.rng.between(1e15, 9e15);
  }

  watch(email: string, body: unknown): { historyId: string; expiration: string } {
    if (!isPlainObject(body)) throw googleErrors.parseError('The request body must be a JSON object.');
    const { topicName, labelIds } = body;
    if (typeof topicName !== 'string' || !/^projects\/[^/]+\/topics\/[^/]+$/.test(topicName)) {
      throw googleErrors.invalid('Invalid topicName does not match projects/*/topics/*');
    }
    const behavior = body.labelFilterBehavior ?? body.labelFilterAction ?? 'include';
    if (behavior !== 'include' && behavior !== 'exclude')
      throw googleErrors.invalid('Invalid labelFilterBehavior');
    const watch: MailboxWatch = {
      topicName,
      labelIds: Array.isArray(labelIds) ? labelIds.filter((l): l is string => typeof l === 'string') : [],
      behavior,
      expiration: this.deps.now() + WATCH_TTL_MS,
    };
    this.watches.set(email, watch);
    return { historyId: String(this.deps.historyIdOf(email)), expiration: String(watch.expiration) };
  }

  stop(email: string): void {
    this.watches.delete(email);
  }

  current(email: string): MailboxWatch | undefined {
    return this.watches.get(email);
  }

  /** The mailbox changed: schedule a push, coalescing with one already waiting. */
  changed(email: string, labelIds: string[]): void {
    const watch = this.watches.get(email);
    if (!watch || watch.expiration <= this.deps.now() || !this.wants(watch, labelIds)) return;
    const pacing = this.pacing.get(email) ?? { lastSentAt: Number.NEGATIVE_INFINITY };
    this.pacing.set(email, pacing);
    if (pacing.timer) return;
    // Pacing is in real time: the clock the receiver sees, whatever ctx.now() says.
    const wait = Math.max(0, pacing.lastSentAt + MIN_PUSH_INTERVAL_MS - performance.now());
    pacing.timer = setTimeout(() => {
      pacing.timer = undefined;
      pacing.lastSentAt = performance.now();
      // The watch as it is now: it may have been renewed or stopped while the push waited.
      const current = this.watches.get(email);
      if (current && current.expiration > this.deps.now()) this.push(email, current);
    }, wait);
  }

  clear(): void {
    for (const pacing of this.pacing.values()) if (pacing.timer) clearTimeout(pacing.timer);
    this.pacing.clear();
    this.watches.clear();
  }

  private wants(watch: MailboxWatch, labelIds: string[]): boolean {
    if (watch.labelIds.length === 0) return true;
    const touches = labelIds.some((l) => watch.labelIds.includes(l));
    return watch.behavior === 'include' ? touches : !touches;
  }

  private push(email: string, watch: MailboxWatch): void {
    const url = this.deps.pushUrlOf(email);
    if (!url) return;
    this.pubsubMessageId += this.deps.rng.between(1, 5000);
    const messageId = String(this.pubsubMessageId);
    const publishTime = new Date(this.deps.now()).toISOString();
    // Gmail's payload carries historyId as a JSON number.
    const data = Buffer.from(
      JSON.stringify({ emailAddress: email, historyId: this.deps.historyIdOf(email) }),
    ).toString('base64url');
    const [, project, topic] = /^projects\/([^/]+)\/topics\/([^/]+)$/.exec(watch.topicName) ?? [];
    const body = {
      message: { data, messageId, message_id: messageId, publishTime, publish_time: publishTime },
      subscription: `projects/${project}/subscriptions/${topic}-push`,
    };
    // Wall-clock times: the receiver verifies the token against its own clock.
    const iat = Math.floor(Date.now() / 1000);
    const token = signGoogleIdToken({
      aud: url,
      azp: '107770116426431012345',
      sub: '107770116426431012345',
      email: PUSH_SERVICE_ACCOUNT,
      email_verified: true,
      iat,
      exp: iat + 3600,
    });
    this.deps.dispatcher.send({
      key: `gmail:${email}`,
      account: email,
      kind: 'gmail',
      url,
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${token}`,
        'User-Agent': 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)',
      },
      body: JSON.stringify(body),
      retryOn: 'any-failure',
    });
  }
}
