import type { EntityType, ErrorCode, ProviderKey, Result, SourceChangeInput } from '@syncline/core';

/**
 * The connector contract. Every provider implements `Connector` in a folder of its own
 * (libs/connectors/src/<provider>/), exports one connector object, and keeps its raw
 * provider types, SDK clients and mappers inside that folder. Nothing outside a connector's
 * folder imports from its inner files; the shared contract suite (contract-suite.ts) runs
 * against every connector with the emulators and the official SDKs.
 *
 * Expected failures are values: every call returns a Result whose error carries a code of
 * the closed set, and workers decide from the code alone.
 */

export interface ConnectorError {
  code: ErrorCode;
  message: string;
  /** For RateLimited: how long the provider asked us to wait. */
  retryAfterMs?: number;
  /** The provider's HTTP status, for logs and metrics. */
  status?: number;
  /**
   * Batch calls (push): the writes at fault, by idempotency key; none of the batch was applied.
   * Set with `Conflict` (a write's `expectedVersion` is no longer the record's version) and
   * `NotFound` (the record a conditional update targets no longer exists).
   */
  failedKeys?: string[];
  /**
   * Conflict from a conditional write: the records at fault as the provider holds them now, as
   * changes (with providerVersion and an event key of that version), so the caller can put them
   * on the log and recompute the write. Each is the change a backfill or pull of that record
   * version reports, mapped the same way with the same event key, so a later pull of the same
   * version is recognised as a duplicate. One per record (several stale writes of a record
   * share it); a record the provider no longer holds as live may appear as a `delete`. Absent
   * where the connector could not read the record (the caller then waits for a pull).
   */
  current?: SourceChangeInput[];
  /**
   * Conflict from a create the provider refused because a record of its own already holds one
   * of the write's unique values (HubSpot: "… already exists. Existing ID: …"): the create, by
   * idempotency key, and that record as the provider holds it now, mapped like `current`. Set
   * only where the refusal is that one write's and the record could be read; the caller decides
   * whether it is the entity's record (nothing of the write was applied).
   */
  existing?: { idempotencyKey: string; record: SourceChangeInput };
}

export type ConnectorResult<T> = Result<T, ConnectorError>;

/**
 * A connector's durable position, per stream (e.g. `contacts` → an updatedAt, `events` →
 * a sync token, `history` → a Gmail history id). JSON-serialisable; stored on the
 * connection row and committed only after the page's changes are on the log.
 */
export type Cursor = Readonly<Record<string, string | number | null>>;

export interface PullProgress {
  seen: number;
  /** Best estimate of the total records, when the provider says. */
  estimatedTotal?: number;
}

export interface PullPage {
  /** Changes in unified field names with an event key identical on every redelivery. */
  changes: SourceChangeInput[];
  /** The cursor to resume from after these changes are durably on the log. */
  cursor: Cursor;
  /** No further page right now: a backfill finished, or an incremental pull caught up. */
  done: boolean;
  progress?: PullProgress;
  /** Event time up to which the cursor guarantees completeness, when known. */
  watermark?: Date;
}

/** An incoming webhook or push notification, as the HTTP layer received it. */
export interface WebhookRequest {
  method: string;
  /** The full public URL the provider called, scheme included (HubSpot v3 signs it). */
  url: string;
  headers: Readonly<Record<string, string | undefined>>;
  /** The raw body, byte for byte (signatures are over the raw body). */
  rawBody: string;
  receivedAt: Date;
}

/** What the connection's stored secrets say a webhook must prove. */
export interface WebhookSecrets {
  /** HubSpot: the app's client secret. */
  clientSecret?: string;
  /**
   * Google Calendar: the channel ids and tokens we registered. Microsoft Graph: the
   * subscription ids (`id`) and the `clientState` each was created with (`token`).
   */
  channels?: readonly { id: string; token: string; resourceId?: string }[];
  /** Gmail: the bearer token (or audience) our push subscription uses. */
  pushBearerToken?: string;
}

export type WebhookOutcome =
  /** The notification carried the changes (HubSpot property changes). */
  | { kind: 'changes'; changes: SourceChangeInput[] }
  /**
   * The notification only says that something changed (Google, Microsoft Graph): run a pull.
   * `subscription`: the provider also asked for the push subscription to be renewed before it
   * lapses (`reauthorize`: Graph's `reauthorizationRequired`) or made again because it is gone
   * (`recreate`: Graph's `subscriptionRemoved`); a pull catches up on what was not notified.
   */
  | { kind: 'pull'; reason: string; subscription?: 'reauthorize' | 'recreate' };

/** One write Syncline wants made in the provider. */
export interface PushWrite {
  /**
   * `merge` folds another of the provider's records into `externalId` with the provider's own
   * merge (HubSpot's), for a connection that holds two records of one entity after a merge in
   * Syncline. Only connectors that say so in `merges` are sent one; others refuse it.
   */
  op: 'create' | 'update' | 'delete' | 'merge';
  entityType: EntityType;
  /** The provider's id; absent for a create. For `merge`: the record that survives. */
  externalId?: string;
  /** `merge`: the record folded into `externalId`; gone afterwards (its id answers as the survivor). */
  mergedExternalId?: string;
  /**
   * `create` only: this provider merged the entity's own record into another at our asking, and
   * the merge was undone in Syncline since. A provider merge cannot be undone, so the entity gets
   * a new record; the old one's unique values (a contact's address) may still find the record it
   * went into (HubSpot keeps it as a secondary address there). The create must make a record of
   * its own, keyed on our id, never matched by those values.
   */
  afterProviderMerge?: boolean;
  /** Unified field names → values to write. */
  fields: Record<string, unknown>;
  /**
   * Derived from (entity, target, resulting heads): a retry with the same key never makes a
   * second record (Calendar client-chosen ids, HubSpot upsert on a unique property of ours).
   */
  idempotencyKey: string;
  /** Our canonical entity id, stored in the provider where possible (origin tag). */
  entityId: string;
  /**
   * The provider version (etag) the write was based on, for updates and deletes: sent as
   * `If-Match` where the provider supports it (Google Calendar: a mismatch is 412 → `Conflict`),
   * so a write computed from a stale read fails instead of overwriting a newer remote edit.
   * Where the provider has no conditional writes the connector reads the current version
   * first and compares (HubSpot: `updatedAt`; Google Tasks: the etag): a mismatch is `Conflict`
   * with `failedKeys`, and nothing of the push is applied. It must be a `providerVersion` the
   * same connector reported (SourceChange or WriteReceipt); the representations match exactly.
   */
  expectedVersion?: string;
}

/**
 * One association Syncline wants made (`associate`, the provider's default type) or removed
 * (`dissociate`) between two records of the provider, by their provider ids. Both are
 * idempotent in the provider: associating a pair already associated, or removing one that is
 * not, changes nothing.
 */
export interface AssociationWrite {
  op: 'associate' | 'dissociate';
  fromType: EntityType;
  fromId: string;
  toType: EntityType;
  toId: string;
  idempotencyKey: string;
}

/** The values of the properties Syncline owns in a CRM (activity insights), for one record. */
export interface InsightValues {
  /** ISO instant. */
  lastContactedAt: string | null;
  lastContactedVia: 'mail_in' | 'mail_out' | 'meeting' | null;
  /** ISO instant. */
  nextMeetingAt: string | null;
  mailsIn30: number;
  mailsOut30: number;
  meetings30: number;
  /** Mails in and out and meetings held in the last 7 days, and in the last 90. */
  engagement7: number;
  engagement90: number;
  trend: 'warming' | 'steady' | 'cooling' | 'cold';
}

/** One record's insight properties to write. */
export interface InsightWrite {
  /** 'person' | 'company' | 'deal' (others refused as Validation). */
  entityType: EntityType;
  /** The record's id in the provider. */
  externalId: string;
  idempotencyKey: string;
  values: InsightValues;
}

/** What became of one InsightWrite: written, or the record is gone (deleted/merged away in the provider). */
export interface InsightWriteResult {
  idempotencyKey: string;
  outcome: 'written' | 'gone';
  /**
   * `written`: the record's version after the write, as pulls report it (`providerVersion`), so
   * the pull that sees the write's echo (the record changed, no field did) can recognise it.
   */
  providerVersion?: string;
}

/** What a write left in the provider: how its echo will be recognised. */
export interface WriteReceipt {
  idempotencyKey: string;
  externalId: string;
  providerVersion?: string;
  /** Hash of the unified fields as written (see contentHash), compared with later reports. */
  contentHash: string;
}

export interface Subscription {
  id: string;
  resourceId?: string;
  expiresAt: Date;
}

/** What a connector is handed for one call: who it acts for and the shared plumbing. */
export interface ConnectionContext {
  connectionId: string;
  workspaceId: string;
  /** The provider account (HubSpot portal id, Google email). */
  externalAccountId: string;
  tokens: TokenSource;
  budget: RateBudget;
  /** Provider base URLs (emulators in tests and the demo, the real providers by default). */
  endpoints: ProviderEndpoints;
  /** Per-connection field-mapping overrides; see FieldMappings. */
  fieldMappings?: FieldMappings;
  /** HubSpot: our app id, to tell our own writes' echoes apart. */
  appId?: string;
}

/**
 * Per-connection field mappings: `<entity type>.<unified field>` → provider property, e.g.
 * `{ "person.leadScore": "lead_score" }` maps a HubSpot custom contact property to a unified
 * field, or moves a default field to another property. Fields a mapping adds carry text.
 */
export type FieldMappings = Readonly<Record<string, string>>;

/** What parsing a webhook needs to know of the connection it arrived for. */
export interface WebhookContext {
  connectionId: string;
  workspaceId: string;
  appId?: string;
  fieldMappings?: FieldMappings;
}

export interface ProviderEndpoints {
  hubspotBaseUrl: string;
  googleRootUrl: string;
  googleTokenUrl: string;
  /** Microsoft Graph's origin, without `/v1.0` (https; the emulator's in tests and the demo). */
  microsoftGraphUrl: string;
}

/** Access tokens for one connection: refreshed before expiry and on 401, refreshes collapsed. */
export interface TokenSource {
  accessToken(): Promise<ConnectorResult<string>>;
  /** Called after a 401: drop the cached token and refresh once (shared by concurrent callers). */
  invalidate(rejected: string): Promise<ConnectorResult<string>>;
}

/** A per-connection request budget shared by every pull and push, across processes. */
export interface RateBudget {
  /** Waits until a request of this kind fits the budget; never fails for lack of budget. */
  acquire(kind?: 'default' | 'search', cost?: number): Promise<void>;
}

/**
 * Credentials to identify, as an admin hands them over or as the workers hold them: a HubSpot
 * private app's token, or OAuth tokens. `expiresAt` (ISO) tells an access token that has
 * expired, which will never be sent again (the refresh token replaces it first).
 */
export interface AccountCredentials {
  privateAppToken?: string;
  accessToken?: string;
  refreshToken?: string;
  expiresAt?: string;
}

/** How a provider named the account: which of its endpoints answered. */
export type AccountProof =
  /** HubSpot's OAuth token info (`GET /oauth/v1/access-tokens/{token}`, and the refresh token's): `hub_id`. */
  | 'hubspot_token_info'
  /** HubSpot's account details (`GET /account-info/v3/details`) for a private app's token: `portalId`. */
  | 'hubspot_account_info'
  /** Google's userinfo (`GET /oauth2/v2/userinfo`): the verified `email`. */
  | 'google_userinfo'
  /** Microsoft Graph's `GET /me` (the user's object id) and `GET /organization` (the tenant's id). */
  | 'microsoft_graph_me';

/** The account the credentials belong to, as the provider itself says. */
export interface ProvenAccount {
  /**
   * HubSpot: the portal (hub) id; Google: the user's verified address, lower case; Microsoft:
   * `<tenant id>:<object id>` (tid and oid, which stay when the user's sign-in name changes).
   */
  accountId: string;
  proof: AccountProof;
  /**
   * The address of the person whose mailbox, calendar or task list the account is, lower case
   * (Google: the verified address; Microsoft: the mailbox's address). None for a CRM portal.
   */
  address?: string;
}

export interface Connector {
  readonly provider: ProviderKey;
  /** The entity types this connector reads. */
  readonly entities: readonly EntityType[];
  /** The entity types it can write back. */
  readonly writable: readonly EntityType[];
  /** The entity types whose records the provider itself can merge (a PushWrite `merge`). */
  readonly merges?: readonly EntityType[];
  /**
   * Fields it reports but can never set (a calendar's organizer and iCalendar UID): never owed
   * to it. Two calendars holding one meeting report their own organizer or UID; writing one's
   * to the other would change nothing there and come back as the other's edit, for ever.
   */
  readonly readOnlyFields?: Readonly<Partial<Record<EntityType, readonly string[]>>>;

  /** One page of the full scan; start with an empty cursor, resume from the returned one. */
  backfill(ctx: ConnectionContext, cursor: Cursor): Promise<ConnectorResult<PullPage>>;
  /** One page of changes since the cursor. `CursorInvalid` means: wipe and backfill. */
  pull(ctx: ConnectionContext, cursor: Cursor): Promise<ConnectorResult<PullPage>>;

  /** Checks signature / channel token / bearer; `Validation` when it fails. Constant time. */
  verifyWebhook(request: WebhookRequest, secrets: WebhookSecrets): ConnectorResult<void>;
  /** Turns a verified webhook into changes or a pull request. */
  parseWebhook(request: WebhookRequest, ctx: WebhookContext): ConnectorResult<WebhookOutcome>;

  /** Creates, updates and deletes, batched where the provider can; idempotent per key. */
  push(ctx: ConnectionContext, writes: readonly PushWrite[]): Promise<ConnectorResult<WriteReceipt[]>>;

  /**
   * Associations between records, batched per pair of types (HubSpot's v4 batch endpoints).
   * A refused batch fails whole (a retry is harmless: both ops are idempotent).
   */
  pushAssociations?(
    ctx: ConnectionContext,
    writes: readonly AssociationWrite[],
  ): Promise<ConnectorResult<void>>;

  /**
   * Asks the provider whose credentials these are. Every token given must name the same
   * account. `AuthRevoked`: the provider refused a token (unknown, revoked, expired);
   * `Validation`: it answered but would not name the account (a Google token without the
   * email scope), or the tokens name different accounts; `Transient` / `RateLimited`: ask
   * again later. No budget is taken: the connection may not exist yet.
   */
  identifyAccount(
    credentials: AccountCredentials,
    endpoints: ProviderEndpoints,
    now?: Date,
  ): Promise<ConnectorResult<ProvenAccount>>;

  /** Creates the properties Syncline owns (activity insights) where missing; idempotent. Returns the names it created. */
  ensureInsightProperties?(ctx: ConnectionContext): Promise<ConnectorResult<{ created: string[] }>>;
  /** Writes insight properties, batched per object type; idempotent per key. */
  pushInsights?(
    ctx: ConnectionContext,
    writes: readonly InsightWrite[],
  ): Promise<ConnectorResult<InsightWriteResult[]>>;

  /** Registers (or renews) push notifications, where the provider needs it. */
  subscribe?(
    ctx: ConnectionContext,
    callbackUrl: string,
    token: string,
  ): Promise<ConnectorResult<Subscription>>;
  unsubscribe?(ctx: ConnectionContext, subscription: Subscription): Promise<ConnectorResult<void>>;
}
