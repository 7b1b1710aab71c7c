import type { EntityType } from '@syncline/core';
import type { ConnectionContext, Connector, Cursor, WebhookRequest, WebhookSecrets } from '../connector';

/**
 * What a provider plugs into the shared contract suite (`describeConnectorContract`).
 *
 * One harness per connector. The suite calls `start` once, asks for a fresh `account` per
 * check (so checks never see each other's records or faults), and `stop` at the end. All
 * remote effects go through the emulator's control API (seed, "act as a user", faults),
 * never through the connector under test, and the connector talks to the emulator through
 * the official SDK.
 *
 * Conventions every connector must follow for the suite to hold:
 * - `backfill` starts from `{}` and, on its last page (`done: true`), returns a cursor that
 *   `pull` accepts: the incremental position as of the start of the backfill.
 * - Event keys are stable: the same remote state read twice gives the same key.
 * - A write receipt's `contentHash` equals `contentHash(change.fields)` of the change a
 *   later pull reports for that same content (its associations, which are no field, left out).
 */
export interface ContractHarness {
  /** Shown in the describe block, e.g. `hubspot`. */
  readonly name: string;
  readonly connector: Connector;
  /**
   * The entity type the checks seed, change, delete and create (one the connector writes;
   * for a read-only connector, one it reads, with `notApplicable.writes` set).
   */
  readonly entityType: EntityType;
  /** Records to seed for the paging checks; must span several pages (thousands for HubSpot). */
  readonly backfillSize: number;
  /**
   * Checks this provider cannot run, each with the reason; instead of the check the suite
   * runs a test, named with the reason, proving the connector refuses what the check needs.
   * - `cursorInvalidation`: the CursorInvalid → resync check.
   * - `webhooks`: the verify/parse check (providers that send no notifications).
   * - `writes`: every push-based check (idempotent create, echo, AuthRevoked on push), for
   *   read-only connectors (`writable` empty); `sampleFields` and `isCreateRequest` are
   *   then never called.
   */
  readonly notApplicable?: Partial<Record<NotApplicableCheck, string>>;
  /** Starts the emulator (and anything shared, e.g. a Redis client). Called once. */
  start(): Promise<void>;
  /** Stops everything `start` started, and removes every Redis key it wrote. */
  stop(): Promise<void>;
  /** A fresh, empty provider account with a connection to it. */
  account(label: string): Promise<HarnessAccount>;
}

/** The groups of checks a harness can declare not applicable (with a reason). */
export type NotApplicableCheck = 'cursorInvalidation' | 'webhooks' | 'writes';

/** Marks a check a provider cannot meaningfully run; the suite proves the refusal instead, with the reason in the name. */
export interface NotApplicable {
  notApplicable: string;
}

export const isNotApplicable = (value: unknown): value is NotApplicable =>
  typeof value === 'object' && value !== null && 'notApplicable' in value;

/** One request the emulator served, as its request log (`GET /_emulator/requests`) reports it. */
export interface LoggedRequest {
  at: string;
  method: string;
  /** Path as sent, query included. */
  path: string;
  status: number;
}

/** How the suite makes a cursor stop working. */
export type CursorInvalidation =
  /** The provider itself now refuses the cursor (e.g. fault `invalidate-cursors`): pull with the same cursor. */
  | { kind: 'remote' }
  /**
   * The provider has no cursor to invalidate; the harness hands back a cursor the connector
   * must refuse (e.g. written by an older connector version), exercising the same reset path.
   */
  | { kind: 'local'; cursor: Cursor; reason: string };

/** A real notification the emulator sent for a real remote change, plus its forgeries. */
export interface WebhookCase {
  /** As the HTTP layer received it; must verify and parse. */
  valid: WebhookRequest;
  secrets: WebhookSecrets;
  /** External id of the record the notification is about. */
  externalId: string;
  /** What `parseWebhook` must answer: the changes themselves, or a request to pull. */
  expectedKind: 'changes' | 'pull';
  /** Each must fail `verifyWebhook` with `Validation`; NotApplicable where a provider signs nothing of the kind. */
  forgeries: {
    badSignature: WebhookRequest | NotApplicable;
    staleTimestamp: WebhookRequest | NotApplicable;
    tamperedBody: WebhookRequest | NotApplicable;
  };
}

/** One provider account (HubSpot portal, Google user) and the connection Syncline has to it. */
export interface HarnessAccount {
  /**
   * A connection context for the connector: real token source (refreshing against the
   * emulator's OAuth endpoint), a budget that matches the emulator's limits for this
   * account, emulator endpoints. A new call may return a new object (a "new process").
   */
  context(): ConnectionContext;
  /** `{ connectionId, workspaceId, appId }` as the webhook route would pass them. */
  webhookContext(): { connectionId: string; workspaceId: string; appId?: string };

  /** Creates `count` records of the harness's entity type remotely (control API); their external ids. */
  seed(count: number): Promise<string[]>;
  /** Changes one record remotely as a user in the provider's UI. */
  changeRemote(externalId: string): Promise<void>;
  /** Deletes (archives, cancels) one record remotely as a user. */
  deleteRemote(externalId: string): Promise<void>;
  /** The record as the emulator holds it (undefined when it does not exist or is deleted). */
  remoteRecord(externalId: string): Promise<Record<string, unknown> | undefined>;
  /** How many live records of the entity type the account holds. */
  remoteCount(): Promise<number>;

  /** Unified fields for a record Syncline creates (the n-th one; distinct per n). */
  sampleFields(n: number): Record<string, unknown>;

  /** Makes the connection's cursor (from a finished backfill) stop working. Not called when not applicable. */
  invalidateCursor(current: Cursor): Promise<CursorInvalidation>;
  /** Makes a remote change and returns the notification the emulator sent for it. Not called when not applicable. */
  webhook(): Promise<WebhookCase>;

  /** The next `count` data-plane calls of this account fail with 429 (`rate-limit`) or 5xx (`server-error`). */
  injectFault(kind: 'rate-limit' | 'server-error', count: number): Promise<void>;
  /** Kills every access and refresh token of the account (fault `revoke-token`). */
  revokeToken(): Promise<void>;
  /** This account's data-plane requests so far, oldest first. */
  requests(): Promise<LoggedRequest[]>;
  /**
   * Whether a logged request is a create of the entity type (create/upsert/insert), whatever
   * its status (a refused duplicate insert counts too).
   */
  isCreateRequest(request: LoggedRequest): boolean;

  /** Releases the account (emulator state, Redis keys of its budget). */
  close(): Promise<void>;
}
