import { err, ok, type Result } from '@syncline/core';
import { type AssociationDelta, AssociationGraph, AssociationTypes } from './associations';
import { OBJECT_TYPE_NAMES, OBJECT_TYPES, type ObjectTypeName } from './object-types';
import { Prng } from './prng';
import { type PortalLimits, PortalRateLimiter } from './rate-limiter';
import {
  type MergeResult,
  RecordStore,
  type StoredRecord,
  type StoreError,
  type WriteResult,
  type WriteSource,
} from './record-store';

export interface WebhookSubscription {
  id: number;
  /** `contact.propertyChange`, `deal.creation`, … */
  subscriptionType: string;
  /** For propertyChange: only this property; absent = every property (an emulator shortcut). */
  propertyName?: string;
  active: boolean;
}

/** How webhook deliveries are paced. HubSpot's real values are far slower; tests want these short. */
export interface WebhookTiming {
  /** How long events gather before a batch goes out. */
  batchDelayMs: number;
  /** HubSpot sends at most 100 events per request. */
  maxBatchSize: number;
  /** First retry after this; each next one waits twice as long. */
  retryBaseMs: number;
  /** HubSpot retries up to 10 times. */
  maxRetries: number;
  /** A receiver slower than this has failed (HubSpot: 5 s). */
  timeoutMs: number;
  /**
   * Events gather and nothing is sent until this is set back to false, when all of them go
   * out at once (in batches of `maxBatchSize`): a test's stand-in for a backlog, such as a
   * subscriber that was down, arriving in one burst.
   */
  held: boolean;
}

export interface PortalSettings {
  portalId: number;
  appId: number;
  clientId: string;
  clientSecret: string;
  webhookUrl: string | null;
  limits: PortalLimits;
  webhookTiming: WebhookTiming;
  subscriptions: WebhookSubscription[];
  uniqueProperties: Record<ObjectTypeName, string[]>;
}

export interface Owner {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  userId: number;
  userIdIncludingInactive: number;
  type: 'PERSON';
  createdAt: string;
  updatedAt: string;
  archived: boolean;
  teams: { id: string; name: string; primary: boolean }[];
}

/** A change to a portal's CRM, from which webhook events are made. */
export type CrmChange =
  | { kind: 'creation' | 'deletion'; type: ObjectTypeName; objectId: string; source: WriteSource; at: number }
  | {
      kind: 'propertyChange';
      type: ObjectTypeName;
      objectId: string;
      propertyName: string;
      propertyValue: string;
      source: WriteSource;
      at: number;
    }
  | {
      kind: 'merge';
      type: ObjectTypeName;
      objectId: string;
      mergedObjectIds: string[];
      numberOfPropertiesMoved: number;
      source: WriteSource;
      at: number;
    }
  | { kind: 'associationChange'; delta: AssociationDelta; source: WriteSource; at: number };

export type ChangeListener = (portal: Portal, change: CrmChange) => void;

const OWNER_NAMES: [string, string][] = [
  ['Ada', 'Lovelace'],
  ['Grace', 'Hopper'],
  ['Alan', 'Turing'],
];

/**
 * One HubSpot account with one installed app: its records, associations, owners and
 * limits. Every write goes through here so each one is recorded as a change.
 */
export class Portal {
  readonly stores: Record<ObjectTypeName, RecordStore>;
  readonly associationTypes = new AssociationTypes();
  readonly associations = new AssociationGraph(this.associationTypes);
  readonly owners: Owner[];
  readonly limiter: PortalRateLimiter;
  /** Event ids, webhook order and duplicates of this portal. */
  readonly eventPrng: Prng;

  constructor(
    public settings: PortalSettings,
    seed: number,
    private readonly now: () => number,
    private readonly onChange: ChangeListener,
  ) {
    const id = settings.portalId;
    this.stores = Object.fromEntries(
      OBJECT_TYPE_NAMES.map((t) => [
        t,
        new RecordStore(OBJECT_TYPES[t], settings.uniqueProperties[t], Prng.derive(seed, 'ids', id, t)),
      ]),
    ) as Record<ObjectTypeName, RecordStore>;
    this.limiter = new PortalRateLimiter(settings.limits);
    this.eventPrng = Prng.derive(seed, 'events', id);
    const ownerPrng = Prng.derive(seed, 'owners', id);
    const created = new Date(now()).toISOString();
    this.owners = OWNER_NAMES.map(([firstName, lastName]) => {
      const userId = ownerPrng.int(1_000_000, 9_999_999);
      return {
        id: String(ownerPrng.int(100_000_000, 999_999_999)),
        email: `${firstName.toLowerCase()}.${lastName.toLowerCase()}@portal-${id}.example.test`,
        firstName,
        lastName,
        userId,
        userIdIncludingInactive: userId,
        type: 'PERSON',
        createdAt: created,
        updatedAt: created,
        archived: false,
        teams: [{ id: String(ownerPrng.int(100_000, 999_999)), name: 'Sales', primary: true }],
      };
    });
  }

  get portalId(): number {
    return this.settings.portalId;
  }

  /** A write made with the app's token: HubSpot echoes it as INTEGRATION with the app id. */
  integrationSource(): WriteSource {
    return { sourceType: 'INTEGRATION', sourceId: String(this.settings.appId) };
  }

  /** A person in the CRM UI (the first owner unless told otherwise). */
  uiSource(userId?: number): WriteSource {
    const id = userId ?? (this.owners[0] as Owner).userId;
    return { sourceType: 'CRM_UI', sourceId: `userId:${id}`, updatedByUserId: id };
  }

  create(
    type: ObjectTypeName,
    properties: Record<string, string>,
    source: WriteSource,
  ): Result<WriteResult, StoreError> {
    const at = this.now();
    const result = this.stores[type].create(properties, source, at);
    if (!result.ok) return result;
    const { record, changes } = result.value;
    this.emit({ kind: 'creation', type, objectId: record.id, source, at });
    for (const c of changes) this.emitProperty(type, record.id, c.name, c.value, source, at);
    return result;
  }

  update(
    type: ObjectTypeName,
    id: string,
    properties: Record<string, string>,
    source: WriteSource,
  ): Result<WriteResult, StoreError> {
    const at = this.now();
    const result = this.stores[type].update(id, properties, source, at);
    if (!result.ok) return result;
    for (const c of result.value.changes)
      this.emitProperty(type, result.value.record.id, c.name, c.value, source, at);
    return result;
  }

  archive(type: ObjectTypeName, id: string, source: WriteSource): Result<StoredRecord, StoreError> {
    const at = this.now();
    const result = this.stores[type].archive(id, at);
    if (result.ok) this.emit({ kind: 'deletion', type, objectId: result.value.id, source, at });
    return result;
  }

  merge(
    type: ObjectTypeName,
    primaryId: string,
    mergedId: string,
    source: WriteSource,
  ): Result<MergeResult, StoreError> {
    const at = this.now();
    const result = this.stores[type].merge(primaryId, mergedId, source, at);
    if (!result.ok) return result;
    const { record, mergedId: merged, numberOfPropertiesMoved } = result.value;
    this.associations.moveAll(type, merged, record.id);
    this.emit({
      kind: 'merge',
      type,
      objectId: record.id,
      mergedObjectIds: [merged],
      numberOfPropertiesMoved,
      source,
      at,
    });
    return result;
  }

  /** Both ends must be live records; type ids must belong to the pair. */
  associate(
    from: ObjectTypeName,
    fromId: string,
    to: ObjectTypeName,
    toId: string,
    typeIds: number[],
    source: WriteSource,
  ): Result<{ fromId: string; toId: string }, StoreError> {
    const a = this.stores[from].get(fromId);
    if (!a) return err({ code: 'NOT_FOUND', id: fromId });
    const b = this.stores[to].get(toId);
    if (!b) return err({ code: 'NOT_FOUND', id: toId });
    for (const typeId of typeIds) {
      const def = this.associationTypes.get(typeId);
      if (!def || def.from !== from || def.to !== to) {
        return err({
          code: 'INVALID',
          message: `${typeId} is not a valid association type between ${from} and ${to}.`,
        });
      }
    }
    const at = this.now();
    const deltas = this.associations.add(from, a.id, to, b.id, typeIds);
    if (deltas.length > 0) this.touchBoth(from, a.id, to, b.id, source, at);
    for (const delta of deltas) this.emit({ kind: 'associationChange', delta, source, at });
    return ok({ fromId: a.id, toId: b.id });
  }

  disassociate(
    from: ObjectTypeName,
    fromId: string,
    to: ObjectTypeName,
    toId: string,
    source: WriteSource,
    typeIds?: number[],
  ): void {
    const a = this.stores[from].get(fromId)?.id ?? fromId;
    const b = this.stores[to].get(toId)?.id ?? toId;
    const at = this.now();
    const deltas = this.associations.remove(from, a, to, b, typeIds);
    if (deltas.length > 0) this.touchBoth(from, a, to, b, source, at);
    for (const delta of deltas) this.emit({ kind: 'associationChange', delta, source, at });
  }

  /** Both ends of a changed association get a new modified date (see RecordStore.touchAssociations). */
  private touchBoth(
    from: ObjectTypeName,
    fromId: string,
    to: ObjectTypeName,
    toId: string,
    source: WriteSource,
    at: number,
  ): void {
    this.stores[from].touchAssociations(fromId, source, at);
    this.stores[to].touchAssociations(toId, source, at);
  }

  private emitProperty(
    type: ObjectTypeName,
    objectId: string,
    propertyName: string,
    propertyValue: string,
    source: WriteSource,
    at: number,
  ): void {
    this.emit({ kind: 'propertyChange', type, objectId, propertyName, propertyValue, source, at });
  }

  private emit(change: CrmChange): void {
    this.onChange(this, change);
  }
}
