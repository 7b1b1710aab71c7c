import { randomUUID } from 'node:crypto';
import { GraphError, graphErrors } from '../graph-errors';
import type { Mailbox } from '../microsoft-state';
import type { MicrosoftUser } from '../user.store';
import type { ChangeType, MailboxChange } from './mailbox-change';
import type { NotificationDispatcher } from './notification.dispatcher';
import { changedItem, parseResource, type ResourceTarget, targets } from './subscription-resource';

/** Limits of subscription creation; the control API changes them for tests. */
export interface SubscriptionSettings {
  /** Outlook resources (events, messages, To Do tasks): 4,230 minutes in the stored table. */
  maxExpirationMinutes: number;
  /** Graph waits 10 s for the validation handshake's answer. */
  validationTimeoutMs: number;
}

export const DEFAULT_SUBSCRIPTION_SETTINGS: SubscriptionSettings = {
  maxExpirationMinutes: 4_230,
  validationTimeoutMs: 10_000,
};

export type LifecycleEvent = 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed';

export interface StoredSubscription {
  id: string;
  user: MicrosoftUser;
  clientId: string;
  resource: string;
  target: ResourceTarget;
  changeTypes: ChangeType[];
  notificationUrl: string;
  lifecycleNotificationUrl: string | null;
  clientState: string | null;
  expiresAt: number;
  /** Created with `Prefer: IdType="ImmutableId"`: messages are named by their immutable ids. */
  immutableIds: boolean;
}

/** Who asks: a subscription belongs to one app and one signed-in user. */
export interface Caller {
  user: MicrosoftUser;
  clientId: string;
}

const CHANGE_TYPES: readonly ChangeType[] = ['created', 'updated', 'deleted'];
const MAX_CLIENT_STATE = 128;

const invalid = (message: string) => new GraphError(400, 'InvalidRequest', message);
const notFound = (id: string) => new GraphError(404, 'ResourceNotFound', `The object '${id}' was not found.`);

/**
 * Graph's webhook subscriptions for every mailbox: created only after the notification URLs
 * pass the validation handshake, told of each change the stores report, gone once expired.
 */
export class Subscriptions {
  readonly settings: SubscriptionSettings = { ...DEFAULT_SUBSCRIPTION_SETTINGS };
  private readonly byId = new Map<string, StoredSubscription>();

  constructor(
    private readonly dispatcher: NotificationDispatcher,
    private readonly now: () => number,
  ) {}

  async create(
    caller: Caller,
    box: Mailbox,
    body: unknown,
    immutableIds: boolean,
  ): Promise<StoredSubscription> {
    const input = objectOf(body);
    const resource = requiredString(input, 'resource');
    const notificationUrl = urlOf(requiredString(input, 'notificationUrl'), 'notificationUrl');
    const lifecycle = input.lifecycleNotificationUrl;
    const lifecycleNotificationUrl =
      lifecycle == null ? null : urlOf(String(lifecycle), 'lifecycleNotificationUrl');
    const subscription: StoredSubscription = {
      id: randomUUID(),
      user: caller.user,
      clientId: caller.clientId,
      resource,
      target: parseResource(resource, box),
      changeTypes: changeTypesOf(requiredString(input, 'changeType')),
      notificationUrl,
      lifecycleNotificationUrl,
      clientState: clientStateOf(input.clientState),
      expiresAt: this.expiryOf(input.expirationDateTime),
      immutableIds,
    };
    await this.handshake(notificationUrl);
    if (lifecycleNotificationUrl !== null) await this.handshake(lifecycleNotificationUrl);
    this.byId.set(subscription.id, subscription);
    return subscription;
  }

  get(caller: Caller, id: string): StoredSubscription {
    const subscription = this.live(id);
    if (!subscription || subscription.user.id !== caller.user.id || subscription.clientId !== caller.clientId)
      throw notFound(id);
    return subscription;
  }

  /** The app's subscriptions for the signed-in user. */
  list(caller: Caller): StoredSubscription[] {
    return this.all().filter((s) => s.user.id === caller.user.id && s.clientId === caller.clientId);
  }

  /** PATCH: a new expiration (renewal), under the same limits as a creation. */
  renew(caller: Caller, id: string, body: unknown): StoredSubscription {
    const subscription = this.get(caller, id);
    const input = objectOf(body);
    if (input.expirationDateTime !== undefined)
      subscription.expiresAt = this.expiryOf(input.expirationDateTime);
    return subscription;
  }

  delete(caller: Caller, id: string): void {
    this.byId.delete(this.get(caller, id).id);
  }

  /** Every live subscription (the control API's view). */
  all(): StoredSubscription[] {
    return [...this.byId.keys()].map((id) => this.live(id)).filter((s) => s !== undefined);
  }

  /** A write in `user`'s mailbox: each live subscription on it, for that change type, is notified. */
  changed(user: MicrosoftUser, change: MailboxChange): void {
    for (const subscription of this.all()) {
      if (subscription.user.id !== user.id || !subscription.changeTypes.includes(change.changeType)) continue;
      if (!targets(subscription.target, change)) continue;
      const item = changedItem(user.id, change, subscription.immutableIds);
      this.dispatcher.send(subscription.notificationUrl, user.userPrincipalName, {
        subscriptionId: subscription.id,
        subscriptionExpirationDateTime: isoOf(subscription.expiresAt),
        changeType: change.changeType,
        resource: item.resource,
        resourceData: item.resourceData,
        clientState: subscription.clientState,
        tenantId: user.tenantId,
      });
    }
  }

  /**
   * A lifecycle event, as Graph raises it: sent to the lifecycle URL (false when the
   * subscription has none); subscriptionRemoved also ends the subscription.
   */
  lifecycle(id: string, event: LifecycleEvent): boolean {
    const subscription = this.live(id);
    if (!subscription) throw notFound(id);
    if (event === 'subscriptionRemoved') this.byId.delete(id);
    const url = subscription.lifecycleNotificationUrl;
    if (url === null) return false;
    this.dispatcher.send(url, subscription.user.userPrincipalName, {
      subscriptionId: subscription.id,
      subscriptionExpirationDateTime: isoOf(subscription.expiresAt),
      tenantId: subscription.user.tenantId,
      clientState: subscription.clientState,
      lifecycleEvent: event,
    });
    return true;
  }

  /** A subscription past its expiration is removed, and sends nothing more. */
  private live(id: string): StoredSubscription | undefined {
    const subscription = this.byId.get(id);
    if (subscription && subscription.expiresAt <= this.now()) {
      this.byId.delete(id);
      return undefined;
    }
    return subscription;
  }

  private expiryOf(value: unknown): number {
    const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(at)) throw invalid('expirationDateTime is required and must be a date and time.');
    const max = this.settings.maxExpirationMinutes;
    if (at <= this.now()) throw invalid('Subscription expiration can only be in the future.');
    if (at > this.now() + max * 60_000)
      throw invalid(`Subscription expiration can only be ${max} minutes in the future.`);
    return at;
  }

  private async handshake(url: string): Promise<void> {
    const token = `Validation: Testing client application reachability for subscription Request-Id: ${randomUUID()}`;
    const result = await this.dispatcher.validate(url, token, this.settings.validationTimeoutMs);
    if (result === 'timeout')
      throw new GraphError(400, 'ValidationError', 'Subscription validation request timeout.');
    if (result === 'refused')
      throw new GraphError(
        400,
        'ValidationError',
        'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.',
      );
  }
}

const isoOf = (ms: number): string => new Date(ms).toISOString();

function objectOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw graphErrors.badRequest('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

function requiredString(input: Record<string, unknown>, name: string): string {
  const value = input[name];
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`${name} is required.`);
  return value;
}

function urlOf(value: string, name: string): string {
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) throw invalid(`${name} must be an absolute URL.`);
  return value;
}

function changeTypesOf(value: string): ChangeType[] {
  const types = value.split(',').map((t) => t.trim());
  for (const type of types)
    if (!CHANGE_TYPES.includes(type as ChangeType)) throw invalid(`Invalid changeType '${type}'.`);
  return [...new Set(types as ChangeType[])];
}

function clientStateOf(value: unknown): string | null {
  if (value == null) return null;
  if (typeof value !== 'string') throw invalid('clientState must be a string.');
  if (value.length > MAX_CLIENT_STATE)
    throw invalid(`clientState can be at most ${MAX_CLIENT_STATE} characters long.`);
  return value;
}
