import { type ChangeOp, type EntityType, ok, type Queryable, type Result } from '@syncline/core';
import {
  dismissPair,
  type IdentityError,
  keptApartFrom,
  mergeEntities,
  pairsKeptApart,
  unmergeEntities,
} from './identity-operations';
import type { MatchIndex } from './match-index';
import { MatchIndexes } from './match-indexes';
import {
  DEFAULT_SETTINGS,
  decodeKey,
  emailsIn,
  encodeKey,
  type IdentitySettings,
  type MatchRecord,
  toMatchRecord,
} from './match-record';
import {
  type IdentityIntent,
  identityOperationOf,
  type LinkReason,
  type MergeIntent,
  type OperationPayload,
  providerMergeOf,
  providerMergeOperationId,
  type UnmergeIntent,
} from './operations';
import { type Candidate, type Resolution, Resolver } from './resolver';
import { entityIdFor, joinOperationIdFor, possibleDuplicateIdFor } from './stable-id';

/** The part of a `SourceChange` or `LogEvent` identity reads. */
export interface IdentityChange {
  workspaceId: string;
  connectionId: string;
  entityType: EntityType;
  externalId: string;
  op: ChangeOp;
  fields: Record<string, unknown>;
  /**
   * The change carries some of the record's fields, not all (a HubSpot property-change or
   * creation notification): without a key it cannot say who the record is.
   */
  partial?: boolean;
  /** The log event's key: names the merge a provider's merge notice makes (providerMergeOperationId). */
  eventKey?: string;
  /** The log event's time: when a person dismissed a pair (a dismissal's `reviewed_at`). */
  eventTime?: Date | string;
}

export interface Participant {
  email: string;
  /** The person the address belongs to; null when the workspace keeps unknown addresses bare. */
  personId: string | null;
}

export interface SourceLinkView {
  connectionId: string;
  entityType: string;
  externalId: string;
  entityId: string;
}

export interface EntityView {
  id: string;
  workspaceId: string;
  entityType: string;
  displayName: string | null;
  mergedInto: string | null;
}

export interface PossibleDuplicateView {
  id: string;
  entityType: string;
  entityA: string;
  entityB: string;
  score: number;
  evidence: string[];
  status: 'open' | 'merged' | 'dismissed';
}

export interface IdentityServiceOptions {
  /** Per-workspace settings; defaults apply where a setting is missing. */
  settings?: (workspaceId: string) => Partial<IdentitySettings>;
  /**
   * The id an entity created for this record takes, when the caller knows one (a replay gives
   * a record back the id it has, whichever record the rebuild happens to meet first);
   * undefined: the id derived from the record.
   */
  entityIdOf?: (
    record: Pick<IdentityChange, 'connectionId' | 'entityType' | 'externalId'>,
  ) => string | undefined;
}

/** What a record holds, to be stored onto its entity (see flushStores). */
interface PendingStore {
  workspaceId: string;
  entityType: string;
  entityId: string;
  kinds: string[];
  values: string[];
  displayName: string | null;
  names: string[];
  blocks: string[];
}
type PendingStores = PendingStore[];

/**
 * The merges identity made by itself while placing a batch (a record whose keys named two
 * entities), by the index of the event that made them: the sync stage applies them to the
 * documents before that event, as it would a merge asked in the API.
 */
export type JoinsByEvent = Map<number, OperationPayload[]>;

/** A record of the batch would join two entities after others of it: the batch ends before it. */
class JoinAhead extends Error {}

/** A batch's records by `linkKey`: the entity each is linked to, or null when it is not. */
type BatchLinks = Map<string, string | null>;

/**
 * Keys (`workspace:type:key`) locked and read from the database at the start of a batch
 * (lockBatchKeys): until the batch moves a link by a merge, the index holds them as the
 * database would, the batch's own records' included (index.add mirrors what their links and
 * stores write), so a record whose keys are all here is matched without locking and reading
 * them again, and without storing the records before it first.
 */
type FreshKeys = ReadonlySet<string>;

/** A deterministic key within its workspace and type: what a key lock and FreshKeys name. */
const scopedKey = (workspaceId: string, entityType: string, key: string) =>
  `${workspaceId}:${entityType}:${key}`;

/**
 * Locks deterministic keys (`workspace:type:key`) for the rest of the transaction, in key
 * order: two processes placing records with one new key never both create an entity for it.
 */
const lockKeys = (tx: Queryable, keys: readonly string[]) =>
  tx.query('SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k ORDER BY k', [
    [...keys].sort(),
  ]);

const linkKey = (c: Pick<IdentityChange, 'connectionId' | 'entityType' | 'externalId'>): string =>
  `${c.connectionId}\u0000${c.entityType}\u0000${c.externalId}`;

/**
 * Links source records to canonical entities inside the caller's transaction, so it runs in
 * a log consumer and commits with the consumer's offset. The `MatchIndex` per workspace and
 * entity type is a cache rebuilt from `entity` and `match_key`; deterministic keys are read
 * from the database before every decision, so entities made by other processes are found.
 */
export class IdentityService {
  private readonly indexes = new MatchIndexes();

  constructor(private readonly options: IdentityServiceOptions = {}) {}

  settingsFor(workspaceId: string): IdentitySettings {
    return { ...DEFAULT_SETTINGS, ...this.options.settings?.(workspaceId) };
  }

  /** Applies a batch of log events in order: identity operations, then everything else. */
  async handle(tx: Queryable, events: readonly IdentityChange[]): Promise<JoinsByEvent> {
    return (await this.handleUntilJoin(tx, events, { stop: false })).joins;
  }

  /**
   * As `handle`, ending the batch at the first record whose keys join two entities: before it,
   * when other events came first (nothing of it is written: `taken` is its index), or just after
   * it when it is the first (`taken` is 1, its joins under index 0). The sync stage places the
   * events before a join on the entities they named then, as a fold one event at a time does.
   */
  async handleUntilJoin(
    tx: Queryable,
    events: readonly IdentityChange[],
    { stop = true }: { stop?: boolean } = {},
  ): Promise<{ joins: JoinsByEvent; taken: number }> {
    const joins: JoinsByEvent = new Map();
    // Every record's link read in one statement; the batch's own links are added as made. A
    // merge or unmerge moves links: from then on each is read again.
    let links: BatchLinks | undefined = await this.linksOfBatch(tx, events);
    // The keys of the batch's records not linked yet, locked and read once.
    let fresh: FreshKeys | undefined = await this.lockBatchKeys(tx, events, links);
    // What the batch's linked records hold (keys, names, blocks) is stored in one statement,
    // before anything reads match keys from the database again and at the end.
    const stores: PendingStores = [];
    for (const [i, event] of events.entries()) {
      const notice = providerMergeOf(event.op, event.fields);
      const operation = notice ? undefined : identityOperationOf(event.op, event.fields);
      // A merge or unmerge reads and moves match keys: what earlier records hold goes first.
      if (notice || operation) await this.flushStores(tx, stores);
      const intent = notice ? await this.providerMerge(tx, event, notice.into) : operation;
      if (notice && !intent) continue;
      if (intent?.kind === 'dismiss') {
        await dismissPair(tx, intent, event.eventTime);
        continue;
      }
      if (intent) {
        links = undefined;
        fresh = undefined;
        const applied = await this.applyOperation(tx, intent);
        // Refused as a conflict (already merged, already undone) it is skipped, and a replay refuses
        // it again at the same point; a malformed one is a bug and goes to the dead letters.
        if (!applied.ok && applied.error.code === 'Validation') throw new Error(applied.error.message);
        continue;
      }
      const joined: OperationPayload[] = [];
      // A record joining two entities after others of the batch: the batch ends before it.
      const stopBeforeJoin = stop && i > 0;
      try {
        await this.resolveChange(tx, event, links, stores, joined, stopBeforeJoin, fresh);
        const addresses = participantsOf(event);
        if (addresses.length > 0) {
          await this.flushStores(tx, stores);
          await this.resolveParticipants(tx, event, addresses, joined, stopBeforeJoin);
        }
      } catch (error) {
        if (!(error instanceof JoinAhead)) throw error;
        await this.flushStores(tx, stores);
        return { joins, taken: i };
      }
      if (joined.length > 0) {
        joins.set(i, joined);
        // A join moves links: from then on each is read again, and keys before each decision.
        links = undefined;
        fresh = undefined;
        if (stop) {
          await this.flushStores(tx, stores);
          return { joins, taken: i + 1 };
        }
      }
    }
    await this.flushStores(tx, stores);
    return { joins, taken: events.length };
  }

  /**
   * The merge a provider's merge notice asks for: the entity of the record merged away into the
   * entity of the record it was merged into. None when either record is unknown, both are one
   * entity already, or the record merged away belongs to an entity merged already (the notice
   * of a merge Syncline asked the provider for: its records were folded by that merge).
   */
  private async providerMerge(
    tx: Queryable,
    notice: IdentityChange,
    into: string,
  ): Promise<MergeIntent | undefined> {
    if (notice.eventKey === undefined) return undefined;
    const { rows } = await tx.query<{ external_id: string; entity_id: string; merged: boolean }>(
      `SELECT l.external_id, l.entity_id::text, e.merged_into IS NOT NULL AS merged
         FROM source_link l JOIN entity e ON e.id = l.entity_id
        WHERE l.connection_id = $1 AND l.entity_type = $2 AND l.external_id = ANY($3::text[])`,
      [notice.connectionId, notice.entityType, [notice.externalId, into]],
    );
    const gone = rows.find((r) => r.external_id === notice.externalId);
    const kept = rows.find((r) => r.external_id === into);
    if (!gone || !kept || gone.entity_id === kept.entity_id || gone.merged || kept.merged) return undefined;
    return {
      kind: 'merge',
      operationId: providerMergeOperationId({ ...notice, eventKey: notice.eventKey }),
      workspaceId: notice.workspaceId,
      entityType: notice.entityType,
      survivorId: kept.entity_id,
      absorbedId: gone.entity_id,
    };
  }

  /**
   * Links one source record to an entity; undefined for a delete (or a provider merge) of a record never seen.
   * `links`, when given, holds the current link (or null) of the records it has keys for;
   * `stores`, when given, takes what a linked record holds, for the caller to store (flushStores);
   * `joins`, the merges the record made (its keys named two entities).
   */
  async resolveChange(
    tx: Queryable,
    change: IdentityChange,
    links?: BatchLinks,
    stores?: PendingStores,
    joins?: OperationPayload[],
    stopBeforeJoin = false,
    fresh?: FreshKeys,
  ): Promise<Resolution | undefined> {
    const settings = this.settingsFor(change.workspaceId);
    const record = toMatchRecord(change.entityType, change.fields, settings);
    // A notification carries the properties that changed: a first name without the last one
    // is no name. Stored, "Kwame" would let any Kwame at the same domain link to the entity;
    // matched, it would link this record by a fragment. Its keys count; its name is the full
    // record's to give.
    if (change.partial) {
      record.name = '';
      record.blocks = [];
      record.displayName = undefined;
      delete record.probes;
    }
    // Deal and meeting keys link across connections only, and a name never links two records of
    // one connection: entities know their connections.
    record.source = change.connectionId;
    const index = await this.indexes.of(tx, change.workspaceId, change.entityType);
    const key = linkKey(change);
    const known = links?.get(key);
    const linked = known === undefined ? await this.linkOf(tx, change) : (known ?? undefined);
    if (linked) {
      // A provider's merge notice (op `merge`, the record redirected into another) says nothing
      // of who the record is; a delete neither.
      if (change.op === 'upsert') await this.storeRecord(tx, change, linked, record, index, stores);
      return {
        entityId: linked,
        decision: 'linked-existing',
        score: 1,
        evidence: [],
        possibleDuplicates: [],
        absorbs: [],
      };
    }
    // A record never seen that is deleted, or merged away in its provider, is nobody.
    if (change.op !== 'upsert') return undefined;
    // An unknown record seen only through some of its fields, none of them a key: linking it
    // now would give it an entity of its own, and the full record (read next) another
    // connection's twin by email. It stays unlinked until the full record arrives.
    if (change.partial && record.keys.length === 0) return undefined;
    // Nor does a notification make an entity when its keys name none (see link): a phone alone
    // links nobody, and a person made of one phone number would be written to every CRM.
    // Matching reads keys from the database: what earlier records of the batch hold goes first.
    // Keys locked and read at the start of the batch are the index's already.
    const keysFresh =
      fresh !== undefined &&
      record.keys.every((k) => fresh.has(scopedKey(change.workspaceId, change.entityType, k)));
    if (stores && !keysFresh) await this.flushStores(tx, stores);
    const resolution = await this.link(
      tx,
      change,
      record,
      index,
      settings,
      joins,
      stopBeforeJoin,
      keysFresh ? stores : undefined,
    );
    if (resolution !== undefined) links?.set(key, resolution.entityId);
    return resolution;
  }

  /**
   * Locks, in one statement and in key order, the deterministic keys of the batch's records
   * that are not linked yet, and reads them into the index (one read per workspace and type):
   * what `link` would do record by record. Returns them as FreshKeys.
   */
  private async lockBatchKeys(
    tx: Queryable,
    events: readonly IdentityChange[],
    links: BatchLinks,
  ): Promise<FreshKeys> {
    const byIndex = new Map<string, { workspaceId: string; entityType: EntityType; keys: Set<string> }>();
    for (const e of events) {
      if (e.op !== 'upsert' || links.get(linkKey(e)) !== null) continue;
      if (identityOperationOf(e.op, e.fields) !== undefined || providerMergeOf(e.op, e.fields)) continue;
      const { keys } = toMatchRecord(e.entityType, e.fields, this.settingsFor(e.workspaceId));
      if (keys.length === 0) continue;
      const group = `${e.workspaceId}:${e.entityType}`;
      const entry = byIndex.get(group) ?? {
        workspaceId: e.workspaceId,
        entityType: e.entityType,
        keys: new Set(),
      };
      for (const k of keys) entry.keys.add(k);
      byIndex.set(group, entry);
    }
    const fresh = new Set<string>();
    if (byIndex.size === 0) return fresh;
    for (const { workspaceId, entityType, keys } of byIndex.values())
      for (const k of keys) fresh.add(scopedKey(workspaceId, entityType, k));
    await lockKeys(tx, [...fresh]);
    for (const { workspaceId, entityType, keys } of byIndex.values()) {
      const index = await this.indexes.of(tx, workspaceId, entityType);
      await this.indexes.refresh(tx, workspaceId, entityType, [...keys], index);
    }
    return fresh;
  }

  private async linksOfBatch(tx: Queryable, events: readonly IdentityChange[]): Promise<BatchLinks> {
    const links: BatchLinks = new Map();
    const records = new Map<string, IdentityChange>();
    for (const e of events) if (identityOperationOf(e.op, e.fields) === undefined) records.set(linkKey(e), e);
    if (records.size === 0) return links;
    const list = [...records.values()];
    const { rows } = await tx.query<{ i: string; entity_id: string }>(
      `SELECT t.i, l.entity_id
         FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS t(conn, type, ext, i)
         JOIN source_link l ON l.connection_id = t.conn AND l.entity_type = t.type AND l.external_id = t.ext`,
      [list.map((e) => e.connectionId), list.map((e) => e.entityType), list.map((e) => e.externalId)],
    );
    for (const key of records.keys()) links.set(key, null);
    const keys = [...records.keys()];
    for (const r of rows) links.set(keys[Number(r.i) - 1]!, r.entity_id);
    return links;
  }

  /**
   * Calendar attendees and mail participants to people, by email. An address with no person
   * becomes one (linked as `mailto:<address>` under the given connection) or stays bare, as
   * the workspace's `participants` setting says.
   */
  async resolveParticipants(
    tx: Queryable,
    source: { workspaceId: string; connectionId: string },
    addresses: readonly unknown[],
    joins?: OperationPayload[],
    stopBeforeJoin = false,
  ): Promise<Participant[]> {
    const settings = this.settingsFor(source.workspaceId);
    const out: Participant[] = [];
    for (const email of emailsIn(addresses, settings)) {
      if (settings.participants === 'create-person') {
        const resolution = await this.resolveChange(
          tx,
          {
            workspaceId: source.workspaceId,
            connectionId: source.connectionId,
            entityType: 'person',
            externalId: `mailto:${email}`,
            op: 'upsert',
            fields: { email },
          },
          undefined,
          undefined,
          joins,
          stopBeforeJoin,
        );
        out.push({ email, personId: resolution?.entityId ?? null });
        continue;
      }
      const index = await this.indexes.of(tx, source.workspaceId, 'person');
      const key = encodeKey('email', email);
      await this.indexes.refresh(tx, source.workspaceId, 'person', [key], index);
      const holder = index.withKey(key)[0];
      out.push({ email, personId: holder === undefined ? null : index.entityId(index.survivor(holder)) });
    }
    return out;
  }

  /**
   * The people addresses belong to now, normalised as matching does, without creating any:
   * for readers of participants already resolved (the sync stage's activity associations).
   * One entry per distinct address, in order.
   */
  async peopleByEmail(
    tx: Queryable,
    workspaceId: string,
    addresses: readonly unknown[],
  ): Promise<Participant[]> {
    const settings = this.settingsFor(workspaceId);
    const emails = emailsIn(addresses, settings);
    if (emails.length === 0) return [];
    const index = await this.indexes.of(tx, workspaceId, 'person');
    const keys = emails.map((email) => encodeKey('email', email));
    await this.indexes.refresh(tx, workspaceId, 'person', keys, index);
    return emails.map((email, i) => {
      const holder = index.withKey(keys[i] as string)[0];
      return { email, personId: holder === undefined ? null : index.entityId(index.survivor(holder)) };
    });
  }

  /** An address as matching normalises it under the workspace's settings; undefined if it is none. */
  emailOf(workspaceId: string, address: unknown): string | undefined {
    return emailsIn([address], this.settingsFor(workspaceId))[0];
  }

  /** Applies a merge or unmerge. Idempotent: an operation id already applied returns its record. */
  async applyOperation(
    tx: Queryable,
    intent: IdentityIntent,
  ): Promise<Result<OperationPayload, IdentityError>> {
    const done = await tx.query<{ payload: OperationPayload }>(
      'SELECT payload FROM identity_operation WHERE id = $1',
      [intent.operationId],
    );
    if (done.rows[0]) return ok(done.rows[0].payload);
    return intent.kind === 'merge' ? this.merge(tx, intent) : this.unmerge(tx, intent);
  }

  async entity(tx: Queryable, entityId: string): Promise<EntityView | undefined> {
    const { rows } = await tx.query<EntityView>(
      `SELECT id, workspace_id AS "workspaceId", entity_type AS "entityType",
              display_name AS "displayName", merged_into AS "mergedInto"
         FROM entity WHERE id = $1`,
      [entityId],
    );
    return rows[0];
  }

  /** Source links of an entity, in a stable order. */
  async linksOf(tx: Queryable, entityId: string): Promise<SourceLinkView[]> {
    const { rows } = await tx.query<SourceLinkView>(
      `SELECT connection_id AS "connectionId", entity_type AS "entityType",
              external_id AS "externalId", entity_id AS "entityId"
         FROM source_link WHERE entity_id = $1
        ORDER BY connection_id, entity_type, external_id`,
      [entityId],
    );
    return rows;
  }

  async possibleDuplicates(
    tx: Queryable,
    workspaceId: string,
    status: PossibleDuplicateView['status'] = 'open',
  ): Promise<PossibleDuplicateView[]> {
    const { rows } = await tx.query<PossibleDuplicateView>(
      `SELECT id, entity_type AS "entityType", entity_a AS "entityA", entity_b AS "entityB",
              score, evidence, status
         FROM possible_duplicate WHERE workspace_id = $1 AND status = $2::possible_duplicate_status
        ORDER BY created_at, id`,
      [workspaceId, status],
    );
    return rows;
  }

  /** Drops cached indexes, so the next change rebuilds them from the database. */
  forget(): void {
    this.indexes.forget();
  }

  private async link(
    tx: Queryable,
    change: IdentityChange,
    record: MatchRecord,
    index: MatchIndex,
    settings: IdentitySettings,
    joins?: OperationPayload[],
    stopBeforeJoin = false,
    /** The record's keys were locked and read at the start of the batch; what the records before it hold is still to store. */
    unstored?: PendingStores,
  ): Promise<Resolution | undefined> {
    const { workspaceId, entityType } = change;
    // Two records with one new key, handled by two processes at once, must not both create.
    if (record.keys.length > 0 && unstored === undefined) {
      await lockKeys(
        tx,
        record.keys.map((k) => scopedKey(workspaceId, entityType, k)),
      );
      await this.indexes.refresh(tx, workspaceId, entityType, record.keys, index);
    }
    const newId = () =>
      this.options.entityIdOf?.(change) ??
      entityIdFor(workspaceId, change.connectionId, entityType, change.externalId);
    const resolver = new Resolver(index, settings);
    let resolution = resolver.resolve(record, newId);
    resolution = await this.candidatesAsStored(tx, resolution, record.source);
    // Keys naming entities someone kept apart say nothing of which one the record is. A
    // notification (our own create's, one property each, before its receipt links it) stays
    // unlinked until its full record or its receipt says; a full record goes with its first key,
    // unless that key names both of such a pair (each took it while they were one: a merge's
    // write echoed back after the unmerge): then it is a person of its own, put up for review
    // beside each, as a wrong link is worse than a missed one.
    if (resolution.absorbs.length > 0) {
      const apart = await this.keptApart(tx, resolution);
      if (apart.size > 0 && change.partial) return undefined;
      resolution = ambiguousKey(resolution, apart, newId);
      resolution = { ...resolution, absorbs: resolution.absorbs.filter((a) => !apart.has(a.entityId)) };
    }
    // A join ahead: nothing of the record is written yet, and the caller ends its batch before it.
    if (stopBeforeJoin && resolution.absorbs.length > 0) throw new JoinAhead();
    const creates =
      resolution.decision === 'created' || resolution.decision === 'created-with-possible-duplicate';
    // A notification carries only the properties that changed (our own create's, one property
    // each, arrive before its receipt links the record): an entity is the full record's to make.
    // Unlinked, the record is read in full next (the sync stage pulls it).
    if (creates && change.partial) return undefined;
    if (creates) {
      await tx.query(
        `INSERT INTO entity (id, workspace_id, entity_type, display_name, match_keys)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
        [resolution.entityId, workspaceId, entityType, record.displayName ?? null, matchData(record)],
      );
    }
    // The record's keys name further entities: they are one person (company, meeting), so they
    // are joined into the one it links to, whatever order their records came in, unless someone
    // kept them apart (above). A join moves match keys in the database: what the records before
    // it hold is stored first.
    if (resolution.absorbs.length > 0 && unstored !== undefined) await this.flushStores(tx, unstored);
    for (const absorbed of resolution.absorbs) {
      const joined = await this.join(tx, change, resolution, absorbed);
      if (joined) joins?.push(joined);
    }
    await tx.query(
      `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id, link_reason)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      [
        workspaceId,
        change.connectionId,
        entityType,
        change.externalId,
        resolution.entityId,
        JSON.stringify(linkReasonOf(resolution)),
      ],
    );
    // With the batch's keys read up front, it is stored with the records before it, later;
    // otherwise now, for the next record's read of the keys.
    await this.storeRecord(tx, change, resolution.entityId, record, index, unstored);
    for (const candidate of resolution.possibleDuplicates) {
      await tx.query(
        `INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score, evidence)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
        [
          possibleDuplicateIdFor(resolution.entityId, candidate.entityId),
          workspaceId,
          entityType,
          resolution.entityId,
          candidate.entityId,
          candidate.score,
          JSON.stringify(candidate.evidence),
        ],
      );
    }
    return resolution;
  }

  /** The entities of `resolution.absorbs` that are not to be joined into its entity (pairsKeptApart). */
  private keptApart(tx: Queryable, resolution: Resolution): Promise<Set<string>> {
    return pairsKeptApart(
      tx,
      resolution.entityId,
      resolution.absorbs.map((a) => ({
        entityId: a.entityId,
        joinId: joinOperationIdFor(resolution.entityId, a.entityId),
      })),
    );
  }

  /**
   * Merges an entity a record's key named into the entity it links to. Its caller has left out
   * the pairs kept apart (keptApart): one joined before, a merge undone (whoever made it) or a
   * pair dismissed is not joined again by the next record that names both.
   */
  private async join(
    tx: Queryable,
    change: IdentityChange,
    resolution: Resolution,
    absorbed: Candidate,
  ): Promise<OperationPayload | undefined> {
    const operationId = joinOperationIdFor(resolution.entityId, absorbed.entityId);
    const applied = await this.merge(tx, {
      kind: 'merge',
      operationId,
      workspaceId: change.workspaceId,
      entityType: change.entityType,
      survivorId: resolution.entityId,
      absorbedId: absorbed.entityId,
      reason: { rule: 'shared-key', evidence: [...resolution.evidence, ...absorbed.evidence], score: 1 },
    });
    // Refused (merged meanwhile by another path): the next record naming both reads them again.
    return applied.ok ? applied.value : undefined;
  }

  /**
   * Keys, names and blocks of a record onto its entity, in the index at once and in the
   * database now, or with the batch's others when `stores` is given (see flushStores).
   */
  private async storeRecord(
    tx: Queryable,
    change: IdentityChange,
    entityId: string,
    record: MatchRecord,
    index: MatchIndex,
    stores?: PendingStores,
  ): Promise<void> {
    record = await this.withoutKeysKeptApart(tx, entityId, record, index);
    const decoded = record.keys.map(decodeKey);
    const names = record.name ? [record.name] : [];
    if (decoded.length > 0 || names.length > 0 || record.blocks.length > 0 || record.displayName) {
      const store: PendingStore = {
        workspaceId: change.workspaceId,
        entityType: change.entityType,
        entityId,
        kinds: decoded.map((k) => k.kind),
        values: decoded.map((k) => k.value),
        displayName: record.displayName ?? null,
        names,
        blocks: record.blocks,
      };
      if (stores) stores.push(store);
      else await this.flushStores(tx, [store]);
    }
    index.add(entityId, record);
  }

  /**
   * The record without the keys an entity kept apart from `entityId` holds. Stored, such a key
   * (a merge's write to one of two people, echoed back after the unmerge) would name both, and
   * say nothing of which one the next record bearing it is. Only a key someone else holds is
   * looked into, so the database is asked only then.
   */
  private async withoutKeysKeptApart(
    tx: Queryable,
    entityId: string,
    record: MatchRecord,
    index: MatchIndex,
  ): Promise<MatchRecord> {
    const own = index.has(entityId) ? index.survivor(index.handle(entityId)) : undefined;
    const holders = new Map<string, string[]>();
    for (const key of record.keys)
      for (const holder of index.withKey(key)) {
        const survivor = index.survivor(holder);
        if (survivor === own) continue;
        const other = index.entityId(survivor);
        if (other === entityId) continue;
        holders.set(key, [...(holders.get(key) ?? []), other]);
      }
    if (holders.size === 0) return record;
    const apart = await keptApartFrom(tx, entityId, [...new Set([...holders.values()].flat())]);
    if (apart.size === 0) return record;
    const keys = record.keys.filter((k) => !(holders.get(k) ?? []).some((o) => apart.has(o)));
    return { ...record, keys };
  }

  /**
   * Stores records' keys, names and blocks onto their entities in one statement; an entity
   * row is rewritten only when it gains something (most changes of a linked record repeat
   * what it already holds). Several records of one entity: their names and blocks together,
   * the first display name given. Empties `stores`.
   */
  private async flushStores(tx: Queryable, stores: PendingStores): Promise<void> {
    if (stores.length === 0) return;
    const rows = stores.map((s, i) => ({ ...s, i }));
    stores.length = 0;
    await tx.query(
      `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(i int, "workspaceId" uuid, "entityType" text,
           "entityId" uuid, kinds text[], "values" text[], "displayName" text, names jsonb, blocks jsonb)
       ), keys AS (
         INSERT INTO match_key (workspace_id, entity_type, kind, value, entity_id)
         SELECT i."workspaceId", i."entityType", k.kind, k.value, i."entityId"
           FROM input i, unnest(i.kinds, i."values") AS k(kind, value)
         ON CONFLICT DO NOTHING
       ), per AS (
         SELECT i."entityId" AS id,
                (array_agg(i."displayName" ORDER BY i.i) FILTER (WHERE i."displayName" IS NOT NULL))[1] AS display_name,
                (SELECT COALESCE(jsonb_agg(DISTINCT x), '[]') FROM input j, jsonb_array_elements_text(j.names) AS x
                  WHERE j."entityId" = i."entityId") AS names,
                (SELECT COALESCE(jsonb_agg(DISTINCT x), '[]') FROM input j, jsonb_array_elements_text(j.blocks) AS x
                  WHERE j."entityId" = i."entityId") AS blocks
           FROM input i GROUP BY i."entityId"
       )
       UPDATE entity e SET
         display_name = COALESCE(e.display_name, p.display_name),
         match_keys = jsonb_build_object(
           'names', (SELECT COALESCE(jsonb_agg(DISTINCT x), '[]') FROM jsonb_array_elements_text(
                       COALESCE(e.match_keys->'names', '[]') || p.names) AS x),
           'blocks', (SELECT COALESCE(jsonb_agg(DISTINCT x), '[]') FROM jsonb_array_elements_text(
                       COALESCE(e.match_keys->'blocks', '[]') || p.blocks) AS x)),
         updated_at = now()
         FROM per p
        WHERE e.id = p.id
          AND NOT ((e.display_name IS NOT NULL OR p.display_name IS NULL)
                   AND COALESCE(e.match_keys->'names', '[]') @> p.names
                   AND COALESCE(e.match_keys->'blocks', '[]') @> p.blocks)`,
      [JSON.stringify(rows)],
    );
  }

  private async linkOf(tx: Queryable, change: IdentityChange): Promise<string | undefined> {
    const { rows } = await tx.query<{ entity_id: string }>(
      'SELECT entity_id FROM source_link WHERE connection_id = $1 AND entity_type = $2 AND external_id = $3',
      [change.connectionId, change.entityType, change.externalId],
    );
    return rows[0]?.entity_id;
  }

  /** Fuzzy candidates come from the cache, which may hold entities of a rolled-back transaction. */
  /**
   * The review candidates as the database has them: one made in memory by a batch that rolled
   * back is dropped, and whether a candidate holds a record of the record's own connection
   * (`same-connection`, which lowers its place in the review queue) is read from its links, not
   * from this process's index (which knows only the links it has seen made, so a restarted
   * process or another batching would tell it differently).
   */
  private async candidatesAsStored(
    tx: Queryable,
    resolution: Resolution,
    source?: string,
  ): Promise<Resolution> {
    if (resolution.possibleDuplicates.length === 0) return resolution;
    const named = resolution.possibleDuplicates.map((c) => c.entityId);
    const { rows } = await tx.query<{ id: string; same: boolean }>(
      `SELECT e.id, EXISTS (SELECT 1 FROM source_link l WHERE l.entity_id = e.id AND l.connection_id = $2::uuid) AS same
         FROM entity e WHERE e.id = ANY($1::uuid[])`,
      [named, source ?? null],
    );
    const same = new Map(rows.map((r) => [r.id, r.same]));
    const possibleDuplicates = resolution.possibleDuplicates
      .filter((c) => same.has(c.entityId))
      .map((c) => ({
        ...c,
        evidence: [
          ...c.evidence.filter((e) => e !== 'same-connection'),
          ...(same.get(c.entityId) ? ['same-connection'] : []),
        ],
      }));
    if (resolution.decision !== 'created-with-possible-duplicate')
      return { ...resolution, possibleDuplicates };
    const first = possibleDuplicates[0];
    if (first === undefined) return { ...resolution, decision: 'created', possibleDuplicates };
    return { ...resolution, score: first.score, evidence: first.evidence, possibleDuplicates };
  }

  private async merge(tx: Queryable, intent: MergeIntent): Promise<Result<OperationPayload, IdentityError>> {
    const merged = await mergeEntities(tx, intent);
    if (merged.ok)
      this.indexes.cached(intent.workspaceId, intent.entityType)?.merge(intent.absorbedId, intent.survivorId);
    return merged;
  }

  private async unmerge(
    tx: Queryable,
    intent: UnmergeIntent,
  ): Promise<Result<OperationPayload, IdentityError>> {
    const unmerged = await unmergeEntities(tx, intent);
    if (unmerged.ok)
      this.indexes.cached(intent.workspaceId, intent.entityType)?.unmerge(unmerged.value.absorbedId);
    return unmerged;
  }
}

function matchData(record: MatchRecord): string {
  return JSON.stringify({ names: record.name ? [record.name] : [], blocks: record.blocks });
}

/** Addresses of a meeting's attendees and organizer, or a message's senders and recipients. */
export function participantsOf(change: Pick<IdentityChange, 'entityType' | 'fields' | 'op'>): unknown[] {
  if (change.op === 'delete') return [];
  const f = change.fields;
  const fields =
    change.entityType === 'meeting'
      ? [f.attendees, f.organizer]
      : change.entityType === 'email_activity'
        ? [f.from, f.to, f.cc, f.bcc]
        : [];
  return fields.flatMap((value) =>
    value === undefined || value === null ? [] : Array.isArray(value) ? value : [value],
  );
}

/** Why a record was linked as it was: stored on its source link, shown in the API. */
export function linkReasonOf(
  resolution: Pick<Resolution, 'decision' | 'evidence' | 'score' | 'possibleDuplicates'>,
): LinkReason {
  if (resolution.decision === 'linked-deterministic')
    return { rule: 'shared-key', evidence: resolution.evidence, score: resolution.score };
  // A new entity: no key matched; near misses, if any, wait in the review queue.
  return {
    rule: 'created',
    evidence: resolution.possibleDuplicates.length > 0 ? ['possible-duplicate-flagged'] : [],
    score: 1,
  };
}

/**
 * A resolution whose first key also names an entity kept apart from the one it chose
 * (`apart`): a new entity, with every entity that key names as a possible duplicate, and no
 * join. Otherwise the resolution as it was.
 */
function ambiguousKey(resolution: Resolution, apart: ReadonlySet<string>, newId: () => string): Resolution {
  const [key] = resolution.evidence;
  if (key === undefined) return resolution;
  const named = resolution.absorbs.filter((a) => a.evidence.includes(key));
  if (!named.some((a) => apart.has(a.entityId))) return resolution;
  const evidence = [key, 'conflicting-deterministic-key'];
  return {
    entityId: newId(),
    decision: 'created-with-possible-duplicate',
    score: 1,
    evidence,
    possibleDuplicates: [resolution.entityId, ...named.map((a) => a.entityId)].map((entityId) => ({
      entityId,
      score: 1,
      evidence,
    })),
    absorbs: [],
  };
}
