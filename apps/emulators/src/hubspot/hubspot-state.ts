import { err, ok, type Result } from '@syncline/core';
import type { EmulatorContext } from '../common/context';
import { OBJECT_TYPE_NAMES, OBJECT_TYPES, type ObjectTypeName } from './object-types';
import { Portal, type PortalSettings, type WebhookSubscription, type WebhookTiming } from './portal';
import { Prng } from './prng';
import { DEFAULT_LIMITS, type PortalLimits } from './rate-limiter';
import { type AccessToken, DEFAULT_SCOPES, type RefreshToken, TokenStore } from './token-store';
import { WebhookDispatcher } from './webhook-dispatcher';

export interface HubspotEmulatorOptions {
  /** Defaults for every portal's webhook pacing. */
  webhookTiming?: Partial<WebhookTiming>;
  defaultLimits?: Partial<PortalLimits>;
  /**
   * Properties unique on every object type of every portal, so idempotent creates by an
   * external id work without setup. HubSpot needs such a property declared as unique.
   */
  defaultUniqueProperties?: string[];
}

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = {
  batchDelayMs: 50,
  maxBatchSize: 100,
  retryBaseMs: 100,
  maxRetries: 10,
  timeoutMs: 5000,
  held: false,
};

const WEBHOOK_KINDS = [
  'creation',
  'deletion',
  'propertyChange',
  'merge',
  'associationChange',
  'restore',
] as const;

export interface PortalInput {
  portalId: number;
  appId: number;
  clientSecret: string;
  clientId?: string;
  webhookUrl?: string | null;
  limits?: Partial<PortalLimits>;
  webhookTiming?: Partial<WebhookTiming>;
  uniqueProperties?: Partial<Record<ObjectTypeName, string[]>>;
  subscriptions?: { subscriptionType: string; propertyName?: string; active?: boolean }[];
}

export type PortalPatch = Pick<
  PortalInput,
  'webhookUrl' | 'limits' | 'webhookTiming' | 'uniqueProperties' | 'subscriptions'
>;

export interface CreatedPortal {
  portal: Portal;
  /** False when the portal existed and was updated. */
  created: boolean;
  accessToken: AccessToken;
  refreshToken: RefreshToken;
}

/** Everything the HubSpot emulator knows: portals, tokens, the webhook dispatcher. */
export class HubspotState {
  readonly portals = new Map<number, Portal>();
  readonly webhooks: WebhookDispatcher;
  tokens: TokenStore;
  private correlation: Prng;

  constructor(
    readonly ctx: EmulatorContext,
    readonly options: HubspotEmulatorOptions = {},
  ) {
    this.tokens = newTokenStore(ctx.seed);
    this.correlation = Prng.derive(ctx.seed, 'correlation');
    this.webhooks = new WebhookDispatcher(ctx, (id) => this.portals.get(id));
  }

  /**
   * Creates a portal with the app installed, or, for a portal that exists with the same
   * app, applies the settings given and issues a fresh grant (records are kept), so setup
   * scripts can run twice. Another app on an existing portal is a conflict.
   */
  createPortal(input: PortalInput): Result<CreatedPortal, 'OTHER_APP'> {
    const existing = this.portals.get(input.portalId);
    if (existing) {
      if (existing.settings.appId !== input.appId) return err('OTHER_APP');
      this.applySettings(existing, input);
      existing.settings.clientSecret = input.clientSecret;
      return ok({ portal: existing, created: false, ...this.issueGrant(existing) });
    }
    const defaults = this.options.defaultUniqueProperties ?? ['syncline_id'];
    const settings: PortalSettings = {
      portalId: input.portalId,
      appId: input.appId,
      clientId: input.clientId ?? defaultClientId(this.ctx.seed, input.appId),
      clientSecret: input.clientSecret,
      webhookUrl: input.webhookUrl ?? null,
      limits: { ...DEFAULT_LIMITS, ...this.options.defaultLimits, ...input.limits },
      webhookTiming: { ...DEFAULT_WEBHOOK_TIMING, ...this.options.webhookTiming, ...input.webhookTiming },
      subscriptions: this.subscriptions(input.appId, input.subscriptions),
      uniqueProperties: Object.fromEntries(
        OBJECT_TYPE_NAMES.map((t) => [t, [...defaults, ...(input.uniqueProperties?.[t] ?? [])]]),
      ) as Record<ObjectTypeName, string[]>,
    };
    const portal = new Portal(settings, this.ctx.seed, () => this.ctx.now(), this.webhooks.onChange);
    this.portals.set(portal.portalId, portal);
    return ok({ portal, created: true, ...this.issueGrant(portal) });
  }

  /** What `PATCH …/portals/{id}` may change: target URL, limits, pacing, unique properties, subscriptions. */
  applySettings(portal: Portal, patch: PortalPatch): void {
    const settings = portal.settings;
    if (patch.webhookUrl !== undefined) settings.webhookUrl = patch.webhookUrl;
    if (patch.limits) {
      settings.limits = { ...settings.limits, ...patch.limits };
      portal.limiter.configure(settings.limits);
    }
    if (patch.webhookTiming) {
      const wasHeld = settings.webhookTiming.held;
      settings.webhookTiming = { ...settings.webhookTiming, ...patch.webhookTiming };
      if (wasHeld && !settings.webhookTiming.held) this.webhooks.release(portal.portalId);
    }
    for (const [type, properties] of Object.entries(patch.uniqueProperties ?? {}) as [
      ObjectTypeName,
      string[],
    ][]) {
      for (const p of properties) portal.stores[type].declareUnique(p);
      settings.uniqueProperties[type] = portal.stores[type].uniqueProperties;
    }
    if (patch.subscriptions) settings.subscriptions = this.subscriptions(settings.appId, patch.subscriptions);
  }

  /** A fresh install grant: new access and refresh tokens for the portal's app. */
  issueGrant(portal: Portal): { accessToken: AccessToken; refreshToken: RefreshToken } {
    const grant = {
      portalId: portal.portalId,
      appId: portal.settings.appId,
      clientId: portal.settings.clientId,
      userId: portal.owners[0]?.userId ?? 0,
      scopes: DEFAULT_SCOPES,
    };
    return {
      accessToken: this.tokens.issueAccess(grant, this.ctx.now()),
      refreshToken: this.tokens.issueRefresh(grant),
    };
  }

  /** A private app created in the portal: its access token, with the app's scopes. */
  issuePrivateAppToken(portal: Portal, scopes: readonly string[] = DEFAULT_SCOPES): AccessToken {
    return this.tokens.issuePrivateApp({
      portalId: portal.portalId,
      appId: portal.settings.appId,
      clientId: portal.settings.clientId,
      userId: portal.owners[0]?.userId ?? 0,
      scopes: [...scopes],
    });
  }

  deletePortal(portalId: number): void {
    this.portals.delete(portalId);
    this.tokens.forgetPortal(portalId);
    this.webhooks.forgetPortal(portalId);
  }

  /** The portal an app's OAuth client id is installed in (the first, or the one asked for). */
  portalForClient(clientId: string, portalId?: number): Portal | undefined {
    if (portalId !== undefined) {
      const portal = this.portals.get(portalId);
      return portal?.settings.clientId === clientId ? portal : undefined;
    }
    return [...this.portals.values()].find((p) => p.settings.clientId === clientId);
  }

  correlationId(): string {
    return this.correlation.uuid();
  }

  reset(): void {
    this.webhooks.reset();
    this.portals.clear();
    this.tokens = newTokenStore(this.ctx.seed);
    this.correlation = Prng.derive(this.ctx.seed, 'correlation');
  }

  /** Subscription ids are the app's, stable per subscription type and property, as in HubSpot. */
  private subscriptions(appId: number, wanted?: PortalInput['subscriptions']): WebhookSubscription[] {
    const all: NonNullable<PortalInput['subscriptions']> =
      wanted ??
      Object.values(OBJECT_TYPES)
        .filter((t) => t.webhooks)
        .flatMap((t) => WEBHOOK_KINDS.map((k) => ({ subscriptionType: `${t.singular}.${k}` })));
    return all.map((s) => ({
      id: Prng.derive(this.ctx.seed, 'subscription', appId, s.subscriptionType, s.propertyName ?? '*').int(
        100_000,
        999_999,
      ),
      subscriptionType: s.subscriptionType,
      ...(s.propertyName === undefined ? {} : { propertyName: s.propertyName }),
      active: s.active ?? true,
    }));
  }
}

const newTokenStore = (seed: number): TokenStore =>
  new TokenStore(Prng.derive(seed, 'tokens'), Prng.derive(seed, 'private-app-tokens'));

/** HubSpot client ids are UUIDs; derived from the app id so every run agrees. */
function defaultClientId(seed: number, appId: number): string {
  return Prng.derive(seed, 'client-id', appId).uuid();
}
