import { err, ok, type Result } from '@syncline/core';
import { isSystemProperty, type ObjectTypeDef } from './object-types';
import type { Prng } from './prng';

/** Who made a write, as HubSpot reports it in property history and webhook events. */
export interface WriteSource {
  sourceType: 'INTEGRATION' | 'CRM_UI' | 'IMPORT';
  /** The app id for INTEGRATION, `userId:<id>` for CRM_UI. */
  sourceId: string;
  updatedByUserId?: number;
}

export interface PropertyVersion {
  value: string;
  timestamp: number;
  sourceType: string;
  sourceId: string;
  updatedByUserId?: number;
}

export interface StoredRecord {
  id: string;
  /** Current values; a property with no value is absent. */
  properties: Map<string, string>;
  /** Every write, newest first, as `propertiesWithHistory` returns it. */
  history: Map<string, PropertyVersion[]>;
  createdAt: number;
  updatedAt: number;
  archived: boolean;
  archivedAt?: number;
  /** Set once merged away: the id now answers as the surviving record. */
  mergedInto?: string;
}

export interface PropertyChange {
  name: string;
  value: string;
}

export type StoreError =
  | { code: 'NOT_FOUND'; id: string }
  | { code: 'CONFLICT'; property: string; value: string; existingId: string }
  | { code: 'INVALID'; message: string };

export interface WriteResult {
  record: StoredRecord;
  /** Caller-supplied properties whose value really changed (what fires propertyChange). */
  changes: PropertyChange[];
}

export interface MergeResult {
  record: StoredRecord;
  mergedId: string;
  numberOfPropertiesMoved: number;
}

/**
 * The records of one object type in one portal: values, history, unique indexes, merges.
 * Ids only grow, so insertion order is id order, which is what list paging walks.
 */
export class RecordStore {
  private readonly byId = new Map<string, StoredRecord>();
  private readonly ordered: StoredRecord[] = [];
  /** property → normalised value → record id. */
  private readonly unique = new Map<string, Map<string, string>>();
  private lastId: number;

  constructor(
    readonly type: ObjectTypeDef,
    uniqueProperties: readonly string[],
    private readonly prng: Prng,
  ) {
    for (const p of new Set([...type.builtInUniqueProperties, ...uniqueProperties]))
      this.unique.set(p, new Map());
    this.lastId = prng.int(10_000_000, 90_000_000);
  }

  get uniqueProperties(): string[] {
    return [...this.unique.keys()];
  }

  isUnique(property: string): boolean {
    return property === 'hs_object_id' || this.unique.has(property);
  }

  declareUnique(property: string): void {
    if (this.unique.has(property)) return;
    const index = new Map<string, string>();
    for (const r of this.ordered) {
      const v = r.properties.get(property);
      if (v !== undefined && !r.archived && !r.mergedInto) index.set(this.normalise(property, v), r.id);
    }
    this.unique.set(property, index);
  }

  /** Every record in id order, archived and merged-away ones included: filter with `isListed`. */
  all(): readonly StoredRecord[] {
    return this.ordered;
  }

  /** Resolves merged ids to the surviving record. */
  get(id: string, options: { archived?: boolean } = {}): StoredRecord | undefined {
    let record = this.byId.get(id);
    for (let hops = 0; record?.mergedInto && hops < 100; hops++) record = this.byId.get(record.mergedInto);
    if (!record || record.mergedInto) return undefined;
    return Boolean(options.archived) === record.archived ? record : undefined;
  }

  /** A record by a unique property (`email`, `hs_object_id`, a declared one). */
  findBy(property: string, value: string): StoredRecord | undefined {
    if (property === 'hs_object_id' || property === 'id') return this.get(value);
    const id = this.unique.get(property)?.get(this.normalise(property, value));
    return id === undefined ? undefined : this.get(id);
  }

  /** Index of the first record whose id is at least `id` (list cursors are ids). */
  indexFrom(id: string): number {
    const target = Number(id);
    let lo = 0;
    let hi = this.ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (Number((this.ordered[mid] as StoredRecord).id) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  create(input: Record<string, string>, source: WriteSource, at: number): Result<WriteResult, StoreError> {
    const values = this.clean(input);
    const conflict = this.findConflict(values, undefined);
    if (conflict) return err(conflict);
    this.lastId += this.prng.int(1, 40);
    const id = String(this.lastId);
    const record: StoredRecord = {
      id,
      properties: new Map(),
      history: new Map(),
      createdAt: at,
      updatedAt: at,
      archived: false,
    };
    const stamp = new Date(at).toISOString();
    this.set(record, 'hs_object_id', id, source, at);
    this.set(record, this.type.createdProperty, stamp, source, at);
    this.set(record, this.type.modifiedProperty, stamp, source, at);
    const changes: PropertyChange[] = [];
    for (const [name, value] of values) {
      if (value === '') continue;
      this.set(record, name, value, source, at);
      changes.push({ name, value });
    }
    this.byId.set(id, record);
    this.ordered.push(record);
    this.index(record);
    return ok({ record, changes });
  }

  update(
    id: string,
    input: Record<string, string>,
    source: WriteSource,
    at: number,
  ): Result<WriteResult, StoreError> {
    const record = this.get(id);
    if (!record) return err({ code: 'NOT_FOUND', id });
    const values = this.clean(input);
    const conflict = this.findConflict(values, record.id);
    if (conflict) return err(conflict);
    this.unindex(record);
    const changes: PropertyChange[] = [];
    for (const [name, value] of values) {
      if ((record.properties.get(name) ?? '') === value) continue;
      this.set(record, name, value, source, at);
      changes.push({ name, value });
    }
    if (changes.length > 0) this.touch(record, source, at);
    this.index(record);
    return ok({ record, changes });
  }

  archive(id: string, at: number): Result<StoredRecord, StoreError> {
    const record = this.get(id);
    if (!record) return err({ code: 'NOT_FOUND', id });
    this.unindex(record);
    record.archived = true;
    record.archivedAt = at;
    record.updatedAt = at;
    return ok(record);
  }

  /**
   * Folds `mergedId` into `primaryId`: the primary keeps its values, gains those it lacked,
   * records the merged id in `hs_merged_object_ids`, and the merged id answers as the primary.
   */
  merge(
    primaryId: string,
    mergedId: string,
    source: WriteSource,
    at: number,
  ): Result<MergeResult, StoreError> {
    const primary = this.get(primaryId);
    if (!primary) return err({ code: 'NOT_FOUND', id: primaryId });
    const merged = this.get(mergedId);
    if (!merged) return err({ code: 'NOT_FOUND', id: mergedId });
    // The same record twice, or one already merged into the other (a retried merge): refused.
    if (primary === merged)
      return err({
        code: 'INVALID',
        message:
          primaryId === mergedId
            ? 'Cannot merge an object with itself.'
            : `Object ${primaryId === primary.id ? mergedId : primaryId} was already merged into ${primary.id}.`,
      });
    this.unindex(primary);
    this.unindex(merged);
    let moved = 0;
    for (const [name, value] of merged.properties) {
      if (isSystemProperty(this.type, name) || primary.properties.has(name)) continue;
      this.set(primary, name, value, source, at);
      moved++;
    }
    const mergedEmail = merged.properties.get('email');
    if (this.type.name === 'contacts' && mergedEmail && mergedEmail !== primary.properties.get('email')) {
      const extra = [
        primary.properties.get('hs_additional_emails'),
        mergedEmail,
        merged.properties.get('hs_additional_emails'),
      ];
      this.set(primary, 'hs_additional_emails', joinList(extra), source, at);
    }
    const mergedIds = [
      primary.properties.get('hs_merged_object_ids'),
      merged.id,
      merged.properties.get('hs_merged_object_ids'),
    ];
    this.set(primary, 'hs_merged_object_ids', joinList(mergedIds), source, at);
    this.touch(primary, source, at);
    merged.mergedInto = primary.id;
    merged.updatedAt = at;
    this.index(primary);
    return ok({ record: primary, mergedId: merged.id, numberOfPropertiesMoved: moved });
  }

  /**
   * An association of the record changed: HubSpot recalculates its association properties
   * (`associatedcompanyid`, `num_associated_contacts`, …), which moves its modified date, so a
   * search by modified date finds the record again. No property change is reported for it.
   */
  touchAssociations(id: string, source: WriteSource, at: number): void {
    const record = this.get(id);
    if (record) this.touch(record, source, at);
  }

  private set(record: StoredRecord, name: string, value: string, source: WriteSource, at: number): void {
    if (value === '') record.properties.delete(name);
    else record.properties.set(name, value);
    const version: PropertyVersion = {
      value,
      timestamp: at,
      sourceType: source.sourceType,
      sourceId: source.sourceId,
    };
    if (source.updatedByUserId !== undefined) version.updatedByUserId = source.updatedByUserId;
    const versions = record.history.get(name);
    if (versions) versions.unshift(version);
    else record.history.set(name, [version]);
  }

  private touch(record: StoredRecord, source: WriteSource, at: number): void {
    record.updatedAt = at;
    this.set(record, this.type.modifiedProperty, new Date(at).toISOString(), source, at);
  }

  /** Drops what callers may not write and normalises what HubSpot normalises (emails). */
  private clean(input: Record<string, string>): Map<string, string> {
    const values = new Map<string, string>();
    for (const [name, raw] of Object.entries(input)) {
      if (isSystemProperty(this.type, name)) continue;
      values.set(name, name === 'email' ? raw.trim().toLowerCase() : raw);
    }
    return values;
  }

  private findConflict(values: Map<string, string>, selfId: string | undefined): StoreError | undefined {
    for (const [property, index] of this.unique) {
      const value = values.get(property);
      if (value === undefined || value === '') continue;
      const existingId = index.get(this.normalise(property, value));
      if (existingId !== undefined && existingId !== selfId)
        return { code: 'CONFLICT', property, value, existingId };
    }
    return undefined;
  }

  private index(record: StoredRecord): void {
    if (record.archived || record.mergedInto) return;
    for (const [property, index] of this.unique) {
      for (const value of this.indexedValues(record, property))
        index.set(this.normalise(property, value), record.id);
    }
  }

  private unindex(record: StoredRecord): void {
    for (const [property, index] of this.unique) {
      for (const value of this.indexedValues(record, property)) {
        const key = this.normalise(property, value);
        if (index.get(key) === record.id) index.delete(key);
      }
    }
  }

  /** A contact is found by its secondary emails too, as after a merge in HubSpot. */
  private indexedValues(record: StoredRecord, property: string): string[] {
    const value = record.properties.get(property);
    const values = value === undefined ? [] : [value];
    if (property === 'email') values.push(...splitList(record.properties.get('hs_additional_emails')));
    return values;
  }

  private normalise(property: string, value: string): string {
    return property === 'email' ? value.trim().toLowerCase() : value;
  }
}

/** Whether a record shows in lists and searches (archived ones only with `archived=true`). */
export const isListed = (record: StoredRecord, archived: boolean): boolean =>
  !record.mergedInto && record.archived === archived;

const splitList = (value: string | undefined): string[] => (value ? value.split(';').filter(Boolean) : []);
const joinList = (parts: (string | undefined)[]): string => [...new Set(parts.flatMap(splitList))].join(';');
