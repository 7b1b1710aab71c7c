import { createHash } from 'node:crypto';
import { type MergeEngine, type MergeOutcome, PgMergeStore } from '@syncline/conflicts';
import { contentHash } from '@syncline/connectors';
import { ENTITY_CHANNEL, type EntityType, type ProviderKey, withoutAssociations } from '@syncline/core';
import {
  type IdentityService,
  identityOperationOf,
  type MovedLink,
  type OperationPayload,
  providerMergeOf,
  providerMergeOperationId,
} from '@syncline/identity';
import type { LogEvent, LogTransaction } from '@syncline/log';
import { claimBareAddresses, writeAssociations } from './associations';
import { versionMayReplace } from './provider-version';
import { oweAssociations } from './relation-writeback';
import { refreshEnds, writeCarried, writeDerived } from './relations';
import { canCreateIn, canMergeIn, type DeletePolicy, isWritable } from './writeback-rules';

/** A connection of a workspace as writeback sees it. */
export interface TargetConnection {
  id: string;
  provider: ProviderKey;
  status: string;
  deletePolicy: DeletePolicy;
  /** Its backfill is linked and the records it lacked were queued: creates may go to it. */
  reconciled: boolean;
}

export interface SyncHandlerOptions {
  identity: IdentityService;
  engine: MergeEngine;
  /** How long a workspace's connection list is reused before it is read again. */
  connectionsTtlMs?: number;
  /**
   * Whether a merge owes the provider's own merge where it leaves two of the provider's records
   * in one connection (default true). A replay passes false: it rebuilds the same links, but a
   * merge it meets again was owed (and sent) when it was first made; writes owed by a replay are
   * final values only.
   */
  providerMerges?: boolean;
}

interface Touched {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  outcome?: MergeOutcome;
  /** Connections whose record of this entity was deleted by this batch. */
  deletedIn: { connectionId: string; at: string }[];
  /** Merged into another entity: its view is saved, nothing is written back from it. */
  frozen?: boolean;
}

/** A merge or unmerge of the batch as the identity stage applied it (its stored payload). */
interface AppliedOperation {
  kind: 'merge' | 'unmerge';
  operationId: string;
  /** For an unmerge, the merge it undoes. */
  undoes?: string;
  workspaceId: string;
  entityType: EntityType;
  survivorId: string;
  absorbedId: string;
  /** The links the merge moved to the survivor, or the unmerge gave back. */
  links: MovedLink[];
  requestedBy?: string;
  /** Made by identity itself (a record naming both): it never asks a provider to merge. */
  joined?: boolean;
}

const appliedOf = (payload: OperationPayload): AppliedOperation => {
  const common = {
    operationId: payload.operationId,
    workspaceId: payload.workspaceId,
    entityType: payload.entityType,
    survivorId: payload.survivorId,
    absorbedId: payload.absorbedId,
    ...(payload.requestedBy === undefined ? {} : { requestedBy: payload.requestedBy }),
  };
  return payload.kind === 'merge'
    ? { ...common, kind: 'merge', links: payload.movedLinks, ...(payload.reason ? { joined: true } : {}) }
    : { ...common, kind: 'unmerge', undoes: payload.undoes, links: payload.restoredLinks };
};

interface OutboxRow {
  workspace_id: string;
  entity_id: string;
  entity_type: string;
  connection_id: string;
  /** `merge`: the provider's own merge of `fields.mergedExternalId` into `external_id`. */
  op: 'create' | 'update' | 'delete' | 'merge';
  external_id: string | null;
  fields: Record<string, unknown>;
  /** What the target holds of these fields now (never-held ones absent). */
  prior?: Record<string, unknown>;
  heads: string[];
  idempotency_key: string;
}

/** The outbox key of the provider merge a Syncline merge owes a connection (see foldMirrors). */
const providerMergeKey = (
  absorbedId: string,
  connectionId: string,
  operationId: string,
  externalId: string,
) => `${absorbedId}.${connectionId}.merge:${operationId}:${externalId}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Our entity id as a provider echoes it back (Calendar private property, HubSpot `syncline_id`). */
function originEntityId(origin: Record<string, unknown> | null): string | undefined {
  const id = origin?.synclineEntityId ?? origin?.synclineId;
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : undefined;
}

interface Receipt {
  /** Connection and idempotency key: the receipt's key. */
  key: string;
  /** What the target held of the written fields before the write (never-held ones absent). */
  prior: Record<string, unknown>;
  /** The entity whose state was written: a receipt of another entity moves nothing here. */
  entityId: string;
  /** When the write started: a report of the record from before it does not reflect it. */
  sentAt: Date;
  heads: string[];
  fields: Record<string, unknown>;
  createdAt: Date;
  applied: boolean;
  /**
   * A write still on its way (its outbox row claimed, no receipt yet): the provider may have
   * applied it, and its report may be on the log before the receipt is stored. It recognises
   * that report as our echo, and nothing more: it moves no synced heads.
   */
  inFlight?: boolean;
}

/** Our write reaches the provider before its receipt is stored; a report this close to it is its echo. */
const ECHO_WINDOW_MS = 5_000;

/**
 * Sorts a provider's report of a record against our recent writes to it (oldest first):
 *
 * - A field reported as it stood before our last write of it started (its time is earlier)
 *   no longer says what the source holds: that write replaced it. The source is marked as
 *   holding what we wrote (`held`). The reported value is still merged as an edit when it
 *   is news: none of our writes' values, and either not what the source held when we wrote
 *   (the write's `prior`; never-held means empty) or dated by the provider itself (a
 *   property-change notification). That is an edit made just before our write, which
 *   HubSpot, having no conditional update, let our write overwrite. Anything else is the
 *   state before our write: dropped.
 * - A field reported exactly as one of our writes set it, no later than that write (give or
 *   take the window), is our echo (`echo`), even when a later write has replaced it since.
 * - A field reported as a write still on its way sets it (claimed, its receipt not yet
 *   stored) is our echo too: the provider applied that write and reported it before the
 *   pusher could store the receipt. Merged as the source's edit, it would carry the
 *   provider's time of our write and win over a later edit made elsewhere meanwhile.
 * - Everything else is the source's edit (`fields`); one made while our last write of that
 *   field was on its way (after it started, before its receipt) may have been overwritten
 *   by it, so the source is also marked as holding what we wrote (`held`): at worst the
 *   winner is written once more.
 */
export function splitEcho(
  event: Pick<LogEvent, 'fields' | 'fieldTimes' | 'eventTime'>,
  receipts: readonly Pick<Receipt, 'fields' | 'createdAt' | 'sentAt' | 'prior' | 'inFlight'>[],
): { fields: Record<string, unknown>; echo?: Record<string, unknown>; held?: Record<string, unknown> } {
  if (receipts.length === 0) return { fields: event.fields };
  const confirmed = receipts.filter((r) => r.inFlight !== true);
  const inFlight = receipts.filter((r) => r.inFlight === true);
  const fields: Record<string, unknown> = {};
  const echo: Record<string, unknown> = {};
  const held: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(event.fields)) {
    const dated = event.fieldTimes[field];
    const at = dated ? Date.parse(dated) : event.eventTime.getTime();
    const hash = contentHash({ v: value });
    const setsIt = (r: (typeof receipts)[number]) =>
      Object.hasOwn(r.fields, field) && contentHash({ v: r.fields[field] }) === hash;
    const writes = confirmed.filter((r) => Object.hasOwn(r.fields, field));
    const last = writes.at(-1);
    if (last !== undefined && at < last.sentAt.getTime()) {
      held[field] = last.fields[field];
      const prior = Object.hasOwn(last.prior, field) ? last.prior[field] : null;
      const ours = writes.some(setsIt);
      if (!ours && (dated || contentHash({ v: prior }) !== hash)) fields[field] = value;
      continue;
    }
    const echoed =
      writes.some((r) => at <= r.createdAt.getTime() + ECHO_WINDOW_MS && setsIt(r)) || inFlight.some(setsIt);
    if (echoed) {
      echo[field] = value;
      continue;
    }
    fields[field] = value;
    // An edit made while our write was on its way: which one the provider kept is unknown,
    // so the source is taken to hold ours, and is written the winner again if it lacks it.
    if (last !== undefined && at < last.createdAt.getTime()) held[field] = last.fields[field];
  }
  return {
    fields,
    ...(Object.keys(echo).length > 0 ? { echo } : {}),
    ...(Object.keys(held).length > 0 ? { held } : {}),
  };
}

/** Who made an edit in Syncline (an API key), and the conflict it settles, if any. */
interface UserEdit {
  userId: string;
  resolves?: string;
}

/** The edit an event carries if it was made in Syncline (origin `{ kind: 'user', userId }`). */
export function userEditOf(event: Pick<LogEvent, 'origin'>): UserEdit | undefined {
  const origin = event.origin;
  if (origin?.kind !== 'user' || typeof origin.userId !== 'string' || origin.userId === '') return undefined;
  return typeof origin.resolves === 'string'
    ? { userId: origin.userId, resolves: origin.resolves }
    : { userId: origin.userId };
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x) => b.includes(x));

const headsDigest = (heads: readonly string[]): string =>
  createHash('sha256')
    .update([...heads].sort().join(','))
    .digest('base64url')
    .slice(0, 22);

/**
 * The sync stage of the pipeline, run as the `sync` log consumer group: for one partition's
 * batch, in the transaction that commits the group's offset, it links every source record to
 * its canonical entity (identity), applies write receipts (a connection reporting what we
 * wrote is our echo: its synced heads move, nothing else does), merges each change into the
 * entity's document under the field policies, refreshes the entity's view row, and inserts
 * an outbox row for every connection owed something. Nothing leaves the process here: push
 * jobs are enqueued after the commit (see `drainTargets`).
 *
 * One entity's source records may sit in different partitions, so two members of the group
 * can reach the same entity at once: its `entity` row is locked (in id order, so two batches
 * never deadlock on each other) for the rest of the transaction, and a cached document is
 * reused only if the row's version is the one this process last wrote.
 */
export class SyncHandler {
  private readonly versions = new Map<string, string>();
  private readonly connections = new Map<string, { at: number; list: TargetConnection[] }>();
  private readonly targets = new Set<string>();
  private readonly pulls = new Set<string>();
  private readonly connectionsTtlMs: number;

  constructor(private readonly options: SyncHandlerOptions) {
    this.connectionsTtlMs = options.connectionsTtlMs ?? 2_000;
  }

  /** Connections to read again (they notified changes of records not yet known) since the last call. */
  drainPulls(): string[] {
    const list = [...this.pulls];
    this.pulls.clear();
    return list;
  }

  /** Connections owed writes by batches handled since the last call. */
  drainTargets(): string[] {
    const list = [...this.targets];
    this.targets.clear();
    return list;
  }

  async handle(tx: LogTransaction, events: readonly LogEvent[]): Promise<void> {
    const touchedIds: string[] = [];
    try {
      const taken = await this.withoutDisconnected(tx, events);
      if (taken.length === 0) return;
      await this.handleBatch(tx, taken, touchedIds);
    } catch (error) {
      // The transaction rolls back: cached documents ahead of the database must go.
      for (const id of touchedIds) {
        this.options.engine.forget(id);
        this.versions.delete(id);
      }
      throw error;
    }
  }

  private async handleBatch(
    tx: LogTransaction,
    carrying: readonly LogEvent[],
    touchedIds: string[],
  ): Promise<void> {
    const { identity, engine } = this.options;
    // A record's CRM associations ride on its fields (ASSOCIATIONS_FIELD) but are no field:
    // identity and merge never see them; writeCarried below does.
    const events = carrying.map((e) => {
      const fields = withoutAssociations(e.fields);
      return fields === e.fields ? e : { ...e, fields };
    });
    await this.linkEchoedCreates(tx, events);
    // Edits made in Syncline name their entity: identity has nothing to resolve.
    const joins = await identity.handle(
      tx,
      events
        .filter((e) => userEditOf(e) === undefined)
        .map((e) => ({ ...e, partial: e.origin?.partial === true })),
    );

    await this.recordVersions(tx, events);
    const operations = await this.identityOperations(tx, events);
    // Merges identity made itself (a record whose keys named two entities), before that record.
    const joined = new Map<number, AppliedOperation[]>();
    for (const [i, payloads] of joins) joined.set(i, payloads.map(appliedOf));
    const allOperations = [...operations.values(), ...[...joined.values()].flat()];
    // Before the batch's events are placed: a copy a merge folds away is nobody's from here on.
    const folds = new Map<string, { connections: string[]; folded: OutboxRow[] }>();
    for (const op of allOperations)
      if (op.kind === 'merge') folds.set(op.operationId, await this.foldMirrors(tx, op));
    const entityOf = await this.entitiesOf(tx, events);
    // A notification about a record identity could not place: the full record is read now.
    // An association change only says that a pair changed: the pull reads the record with all of them.
    events.forEach((e, i) => {
      if (
        e.op === 'upsert' &&
        e.origin?.partial === true &&
        (entityOf[i] === undefined || e.origin.associationChange === true)
      )
        this.pulls.add(e.connectionId);
    });
    // Entities a merge or unmerge of the batch moves (a frozen one is among them).
    const operated = new Set(allOperations.flatMap((o) => [o.survivorId, o.absorbedId]));
    const ids = [
      ...new Set([...entityOf.filter((id): id is string => id !== undefined), ...operated]),
    ].sort();
    if (ids.length === 0) return;
    touchedIds.push(...ids);
    const storedHeads = await this.lockAndValidate(tx, ids);

    const receipts = await this.receiptsOf(tx, events);
    // Appended changes and synced heads go out in a few multi-row statements at the end of the
    // batch (or before a load or compaction that needs them), not one statement each.
    const store = new PgMergeStore(tx, { deferWrites: true });
    const touched = new Map<string, Touched>();
    const applied: string[] = [];
    // Records a merge leaves twice in one connection: our own copy archived there, or both the
    // provider's own merged there by the provider.
    const foldWrites: OutboxRow[] = [];

    for (const [i, event] of events.entries()) {
      for (const join of joined.get(i) ?? [])
        await this.applyIdentityOperation(tx, store, event, join, touched, foldWrites, folds);
      const operation = operations.get(i);
      if (operation !== undefined) {
        await this.applyIdentityOperation(tx, store, event, operation, touched, foldWrites, folds);
        continue;
      }
      const entityId = entityOf[i];
      if (entityId === undefined || event.op === 'merge') continue;
      let entry = touched.get(entityId);
      if (entry === undefined) {
        entry = { entityId, workspaceId: event.workspaceId, entityType: event.entityType, deletedIn: [] };
        touched.set(entityId, entry);
      }
      const edit = userEditOf(event);
      if (edit !== undefined) {
        entry.outcome = await this.applyUserEdit(tx, store, entityId, event, edit);
        continue;
      }
      const recordKey = `${event.connectionId}|${event.entityType}|${event.externalId}`;
      const ofRecord = receipts.get(recordKey) ?? [];
      for (const receipt of ofRecord) {
        if (receipt.applied) continue;
        // A report from before the write (a read or notification that raced it) is merged
        // against what the source held then; a later report applies the receipt.
        if (event.eventTime < receipt.sentAt) break;
        receipt.applied = true;
        applied.push(receipt.key);
        // A write made for another entity (a create that the provider matched to a record
        // linked elsewhere, or an entity since merged) says nothing about this one's heads.
        if (receipt.entityId !== entityId) continue;
        await engine.markSeen(entityId, event.workspaceId, event.connectionId, receipt.heads, store);
      }
      const { fields, echo, held } = splitEcho(event, ofRecord);
      if (event.op === 'delete') {
        entry.deletedIn.push({ connectionId: event.connectionId, at: event.eventTime.toISOString() });
        await tx.query(
          'DELETE FROM source_link WHERE connection_id = $1 AND entity_type = $2 AND external_id = $3',
          [event.connectionId, event.entityType, event.externalId],
        );
        continue;
      }
      entry.outcome = await engine.applyInbound(
        {
          entityId,
          workspaceId: event.workspaceId,
          entityType: event.entityType,
          source: { kind: 'connection', id: event.connectionId },
          eventKey: `${event.connectionId}:${event.eventKey}`,
          eventTime: event.eventTime,
          fields,
          fieldTimes: event.fieldTimes,
          ...(echo ? { echo } : {}),
          ...(held ? { held } : {}),
        },
        store,
      );
    }
    await this.markReceiptsApplied(tx, applied);
    for (const entry of touched.values()) {
      const ref = { entityId: entry.entityId, workspaceId: entry.workspaceId, entityType: entry.entityType };
      // Moving in-step connections to the current heads owes nobody anything new.
      await engine.catchUp(ref, store);
      entry.outcome ??= await engine.outcome(ref, store);
    }
    // A view whose document did not move (an echo of our own write, a pull re-reading what a
    // webhook brought, an edit equal to the current value) is not saved again: its row, its
    // version (which a salesperson's If-Match holds) and its announcement stay as they are.
    await this.saveViews(
      tx,
      [...touched.values()].filter((t) => {
        const stored = storedHeads.get(t.entityId);
        return (
          stored === undefined ||
          t.deletedIn.length > 0 ||
          operated.has(t.entityId) ||
          !sameSet(stored, t.outcome?.heads ?? [])
        );
      }),
    );
    // Who took part in each activity, from its merged view; in this transaction, so a replay rewrites it.
    await writeAssociations(
      tx,
      identity,
      [...touched.values()].map((t) => ({
        entityId: t.entityId,
        workspaceId: t.workspaceId,
        entityType: t.entityType,
        values: t.outcome?.values ?? {},
        frozen: t.frozen === true,
      })),
    );
    // Which company a person works at, which people and company a deal involves: from what the
    // records carry, following the links the batch made or moved, then derived by domain.
    const removals = await writeCarried(tx, carrying, entityOf);
    await refreshEnds(tx, [...touched.keys()]);
    await writeDerived(
      tx,
      [...touched.values()].map((t) => ({
        entityId: t.entityId,
        workspaceId: t.workspaceId,
        entityType: t.entityType,
        frozen: t.frozen === true,
      })),
    );
    // Only a workspace that keeps bare addresses (no person made for them) has any to claim.
    await claimBareAddresses(
      tx,
      [...touched.values()]
        .filter(
          (t) =>
            t.entityType === 'person' && identity.settingsFor(t.workspaceId).participants === 'bare-address',
        )
        .map((t) => t.entityId),
    );
    // Archives and provider merges first: pushed in outbox order, a copy (or the merged-away
    // record) is gone before a write that takes its unique values (its email) reaches the
    // record the connection keeps.
    await this.queueFoldWrites(tx, foldWrites);
    // A merged-away entity owes nothing (its pending rows were dropped by the merge).
    const owing = [...touched.values()].filter((t) => !t.frozen);
    await this.writeOutbox(tx, owing);
    // Associations one CRM made, owed to the others (and who took part in an activity, to its
    // engagements): after the creates above, which an association to a new record waits for.
    const associating = await oweAssociations(
      tx,
      [...touched.values()].map((t) => ({
        entityId: t.entityId,
        workspaceId: t.workspaceId,
        entityType: t.entityType,
        frozen: t.frozen === true,
      })),
      removals,
      (workspaceId) => this.connectionsOf(tx, workspaceId),
    );
    for (const id of associating) this.targets.add(id);
    // In this transaction, for entities it holds: a snapshot must never hold uncommitted changes.
    for (const id of touched.keys()) await engine.compactIfDue(id, store);
    await store.flush();
  }

  /**
   * Leaves out events of disconnected connections (appended before the disconnect, or by a
   * pull that was running): taking them in would link their records again. The key share
   * lock holds the batch against a disconnect in progress (it locks the row FOR UPDATE), so
   * either the disconnect waits for this batch and removes what it linked, or this batch
   * waits for the disconnect and sees it; ordinary updates of the row are not blocked.
   */
  private async withoutDisconnected(tx: LogTransaction, events: readonly LogEvent[]): Promise<LogEvent[]> {
    const ids = [...new Set(events.map((e) => e.connectionId))];
    // Every row is locked, not only disconnected ones: a row a disconnect is changing must be
    // waited for (and then read as it committed), which a filter on the status would skip.
    const { rows } = await tx.query<{ id: string; status: string }>(
      'SELECT id::text AS id, status::text AS status FROM connection WHERE id = ANY($1::uuid[]) ORDER BY id FOR KEY SHARE',
      [ids],
    );
    const gone = new Set(rows.filter((r) => r.status === 'disconnected').map((r) => r.id));
    return gone.size === 0 ? [...events] : events.filter((e) => !gone.has(e.connectionId));
  }

  /** The batch's merges and unmerges that the identity stage applied (a refused one is not stored). */
  private async identityOperations(
    tx: LogTransaction,
    events: readonly LogEvent[],
  ): Promise<Map<number, AppliedOperation>> {
    const intents = new Map<number, string>();
    events.forEach((e, i) => {
      if (e.op !== 'merge') return;
      const intent = identityOperationOf(e.op, e.fields);
      if (intent !== undefined) intents.set(i, intent.operationId);
      // A provider's merge notice made a merge of ours if identity found two entities to merge.
      else if (providerMergeOf(e.op, e.fields) !== undefined) intents.set(i, providerMergeOperationId(e));
    });
    const out = new Map<number, AppliedOperation>();
    if (intents.size === 0) return out;
    const { rows } = await tx.query<{ id: string; payload: OperationPayload }>(
      'SELECT id, payload FROM identity_operation WHERE id = ANY($1::uuid[])',
      [[...intents.values()]],
    );
    const stored = new Map(rows.map((r) => [r.id, r.payload]));
    for (const [i, operationId] of intents) {
      const payload = stored.get(operationId);
      if (payload !== undefined) out.set(i, appliedOf(payload));
    }
    return out;
  }

  /**
   * The documents follow a merge of entities: the survivor takes in the absorbed entity's
   * values (EntityDocument.absorb), so every connection now linked to it is owed the union
   * through the outbox below; the absorbed entity's view is saved once more and frozen, its
   * pending writes are dropped (the survivor's carry everything) and its open conflicts
   * close, standing again on the survivor. An unmerge gives back: the split-off entity takes
   * its connections back with the edits they made while merged and is owed to them again,
   * the survivor's document gives back what it took in, and conflicts follow.
   */
  private async applyIdentityOperation(
    tx: LogTransaction,
    store: PgMergeStore,
    event: LogEvent,
    op: AppliedOperation,
    touched: Map<string, Touched>,
    foldWrites: OutboxRow[],
    folds: ReadonlyMap<string, { connections: string[]; folded: OutboxRow[] }>,
  ): Promise<void> {
    const { engine } = this.options;
    const ref = (entityId: string) => ({ entityId, workspaceId: op.workspaceId, entityType: op.entityType });
    const entryOf = (entityId: string): Touched => {
      const entry = touched.get(entityId) ?? {
        entityId,
        workspaceId: op.workspaceId,
        entityType: op.entityType,
        deletedIn: [],
      };
      touched.set(entityId, entry);
      return entry;
    };
    const survivor = entryOf(op.survivorId);
    const absorbed = entryOf(op.absorbedId);
    const by = { kind: 'user', id: op.requestedBy ?? (op.joined ? 'identity' : 'identity-review') } as const;
    if (op.kind === 'merge') {
      const { connections, folded } = folds.get(op.operationId) ?? { connections: [], folded: [] };
      await this.seeWritten(tx, store, ref(op.absorbedId));
      survivor.outcome = await engine.absorb(
        ref(op.survivorId),
        ref(op.absorbedId),
        { operationId: op.operationId, workspaceId: op.workspaceId, at: event.eventTime, connections },
        store,
      );
      absorbed.outcome = await engine.outcome(ref(op.absorbedId), store);
      // A provider merge this operation owes (queued under the absorbed entity) is no such write.
      await tx.query(
        `UPDATE outbox SET status = 'superseded' WHERE entity_id = $1 AND status = 'pending' AND op <> 'merge'`,
        [op.absorbedId],
      );
      await tx.query(
        `UPDATE merge_conflict SET status = 'resolved', resolved_by = $2, resolved_at = now(),
                resolution = jsonb_build_object('mergedInto', $3::text)
          WHERE entity_id = $1 AND status = 'open'`,
        [op.absorbedId, `merge:${op.operationId}`, op.survivorId],
      );
      foldWrites.push(...folded);
    } else {
      // A connection that also has a record of the survivor of its own stays with it.
      const { rows: shared } = await tx.query<{ connection_id: string }>(
        'SELECT DISTINCT connection_id FROM source_link WHERE entity_id = $1 AND connection_id = ANY($2::uuid[])',
        [op.survivorId, op.links.map((l) => l.connectionId)],
      );
      const keep = new Set(shared.map((r) => r.connection_id));
      const connections = [...new Set(op.links.map((l) => l.connectionId))].filter((c) => !keep.has(c));
      await this.undoProviderMerges(tx, op);
      // The copies the merge folded are archived: the split-off entity is owed new ones.
      await tx.query(
        `WITH folded AS (SELECT flags->'folded' AS keys FROM entity WHERE id = $1),
              unlinked AS (
                DELETE FROM source_link l USING folded f
                 WHERE l.entity_id = $1
                   AND f.keys ? (l.connection_id::text || '|' || l.entity_type || '|' || l.external_id))
         UPDATE entity SET flags = flags - 'folded' WHERE id = $1`,
        [op.absorbedId],
      );
      const at = event.eventTime;
      await this.seeWritten(tx, store, ref(op.survivorId));
      absorbed.outcome = await engine.splitOff(
        ref(op.absorbedId),
        ref(op.survivorId),
        { operationId: op.operationId, connections, by, at },
        store,
      );
      survivor.outcome = await engine.retract(
        ref(op.survivorId),
        { mergeOperationId: op.undoes ?? '', operationId: op.operationId, by, at },
        store,
      );
      await tx.query(
        `UPDATE merge_conflict SET status = 'open', resolution = NULL, resolved_by = NULL, resolved_at = NULL
          WHERE entity_id = $1 AND resolved_by = $2`,
        [op.absorbedId, `merge:${op.undoes}`],
      );
      await tx.query(
        `UPDATE merge_conflict SET status = 'resolved', resolved_by = $2, resolved_at = now()
          WHERE entity_id = $1 AND status = 'open' AND NOT (id = ANY($3::uuid[]))`,
        [
          op.survivorId,
          `unmerge:${op.operationId}`,
          await engine.standingConflictIds(ref(op.survivorId), store),
        ],
      );
    }
    // Either side may stand merged into another entity (the absorbed one, or a survivor merged since).
    const { rows: merged } = await tx.query<{ id: string }>(
      'SELECT id FROM entity WHERE id = ANY($1::uuid[]) AND merged_into IS NOT NULL',
      [[op.survivorId, op.absorbedId]],
    );
    const frozen = new Set(merged.map((r) => r.id));
    survivor.frozen = frozen.has(op.survivorId);
    absorbed.frozen = frozen.has(op.absorbedId);
  }

  /**
   * After a merge a connection may hold two records of the survivor: its own and the one it
   * had of the absorbed entity. When one of the two is a copy we created there (the other
   * entity's record written to it: a receipt of our create), the copy is unlinked and
   * archived in the provider, and the connection goes on with the record it had of its own
   * (of the survivor, or of the absorbed entity, whose view the survivor then takes over).
   * The create rows of archived copies are set aside, so an unmerge can create the copy again.
   *
   * When both are the provider's own records (one each, neither made by us) and the provider
   * merges records itself (HubSpot), the connection is owed that merge: the absorbed entity's
   * record is folded into the survivor's own one, which stays the survivor's record there and
   * is owed the union like any other. The record merged away is folded at once, before the
   * provider confirms: it is about to be gone, so nothing is written to it from here on, and
   * its late reports (notifications, the provider's own merge notice, a delete) are nobody's
   * news. Elsewhere (Google, say) two records a person made in one system both stay linked.
   *
   * Folded records stay linked, to the absorbed entity and listed in its `flags.folded` (a
   * provider merge in `flags.providerMerged` too, record → the record it went into), so that
   * an unmerge finds them (see applyIdentityOperation). Returns the moved connections that now
   * carry only the absorbed entity's record, and the archive and merge writes.
   */
  private async foldMirrors(
    tx: LogTransaction,
    op: AppliedOperation,
  ): Promise<{ connections: string[]; folded: OutboxRow[] }> {
    const moved = op.links;
    const { rows } = await tx.query<{
      connection_id: string;
      entity_type: string;
      external_id: string;
      moved: boolean;
      created_for: string | null;
    }>(
      `SELECT l.connection_id, l.entity_type, l.external_id,
              (l.connection_id, l.entity_type, l.external_id) IN (
                SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[])) AS moved,
              (SELECT r.entity_id FROM write_receipt r
                WHERE r.connection_id = l.connection_id AND r.entity_type = l.entity_type
                  AND r.external_id = l.external_id
                  AND r.idempotency_key = r.entity_id::text || '.' || r.connection_id::text || '.create'
                LIMIT 1)::text AS created_for
         FROM source_link l
        WHERE l.entity_id = $1 AND l.connection_id = ANY($2::uuid[])
        ORDER BY l.connection_id, l.external_id`,
      [
        op.survivorId,
        moved.map((l) => l.connectionId),
        moved.map((l) => l.entityType),
        moved.map((l) => l.externalId),
      ],
    );
    const providers = new Map(
      (await this.connectionsOf(tx, op.workspaceId)).map((c) => [c.id, c.provider] as const),
    );
    const connections: string[] = [];
    const dropped: { connectionId: string; entityType: string; externalId: string; createdFor: string }[] =
      [];
    const merged: { connectionId: string; entityType: string; externalId: string; into: string }[] = [];
    for (const connectionId of [...new Set(rows.map((r) => r.connection_id))]) {
      const links = rows.filter((r) => r.connection_id === connectionId);
      const own = links.filter((r) => !r.moved);
      const theirs = links.filter((r) => r.moved);
      const drop = (list: typeof links) =>
        dropped.push(
          ...list.map((r) => ({
            connectionId,
            entityType: r.entity_type,
            externalId: r.external_id,
            createdFor: r.created_for ?? '',
          })),
        );
      const provider = providers.get(connectionId);
      const [mine, other] = [own[0], theirs[0]];
      if (own.length === 0) connections.push(connectionId);
      else if (theirs.every((r) => r.created_for === op.absorbedId)) drop(theirs);
      else if (own.every((r) => r.created_for === op.survivorId)) {
        drop(own);
        connections.push(connectionId);
      } else if (
        own.length === 1 &&
        theirs.length === 1 &&
        mine?.created_for === null &&
        other?.created_for === null &&
        provider !== undefined &&
        canMergeIn(provider, op.entityType) &&
        // Identity's own join asks no provider to merge: both records stay linked.
        op.joined !== true
      )
        merged.push({
          connectionId,
          entityType: other.entity_type,
          externalId: other.external_id,
          into: mine.external_id,
        });
    }
    const folds = [...dropped, ...merged];
    if (folds.length === 0) return { connections, folded: [] };
    // The copy stays linked, to the absorbed entity and marked folded: its late reports (the
    // notifications of our create, its archive) then find a link, so neither identity nor an
    // echo of our id links it anew, and the merge stage leaves them be (entitiesOf).
    const keyOf = (d: { connectionId: string; entityType: string; externalId: string }) =>
      `${d.connectionId}|${d.entityType}|${d.externalId}`;
    await tx.query(
      `UPDATE source_link SET entity_id = $4 WHERE (connection_id, entity_type, external_id) IN (
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[]))`,
      [
        folds.map((d) => d.connectionId),
        folds.map((d) => d.entityType),
        folds.map((d) => d.externalId),
        op.absorbedId,
      ],
    );
    await tx.query(
      `UPDATE entity SET flags = jsonb_set(
                jsonb_set(flags, '{folded}', COALESCE(flags->'folded', '[]'::jsonb) || $2::jsonb),
                '{providerMerged}', COALESCE(flags->'providerMerged', '{}'::jsonb) || $3::jsonb)
        WHERE id = $1`,
      [
        op.absorbedId,
        JSON.stringify(folds.map(keyOf)),
        JSON.stringify(Object.fromEntries(merged.map((m) => [keyOf(m), m.into]))),
      ],
    );
    if (dropped.length > 0)
      await tx.query(
        `UPDATE outbox SET idempotency_key = idempotency_key || '.folded:' || $3
          WHERE (connection_id, idempotency_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
        [
          dropped.map((d) => d.connectionId),
          dropped.map((d) => `${d.createdFor}.${d.connectionId}.create`),
          op.operationId,
        ],
      );
    // Under the absorbed entity, whose one link in the connection is the folded record: the write
    // goes there alone (never coalesced with the survivor's update of the record it keeps).
    const archives: OutboxRow[] = dropped.map((d) => ({
      workspace_id: op.workspaceId,
      entity_id: op.absorbedId,
      entity_type: d.entityType,
      connection_id: d.connectionId,
      op: 'delete',
      external_id: d.externalId,
      fields: {},
      heads: [],
      idempotency_key: `${op.absorbedId}.${d.connectionId}.fold:${op.operationId}:${d.externalId}`,
    }));
    // One merge per operation and record, whatever retries or replays meet it again.
    const merges: OutboxRow[] =
      this.options.providerMerges === false
        ? []
        : merged.map((m) => ({
            workspace_id: op.workspaceId,
            entity_id: op.absorbedId,
            entity_type: m.entityType,
            connection_id: m.connectionId,
            op: 'merge',
            external_id: m.into,
            fields: { mergedExternalId: m.externalId },
            heads: [],
            idempotency_key: providerMergeKey(op.absorbedId, m.connectionId, op.operationId, m.externalId),
          }));
    return { connections, folded: [...archives, ...merges] };
  }

  /**
   * An unmerge meets the records the merge had the provider merge (foldMirrors). HubSpot cannot
   * undo a merge: where ours was sent, the split-off entity's record there is gone (its id
   * answers as the survivor's record), so it stays folded, is unlinked with the folded copies,
   * and the entity is owed a new record in that connection, made with its own values by the
   * normal create path: `flags.recreateIn` lets the create through where a person, company or
   * deal is otherwise created only from another CRM (canCreateIn), and tells the push to key
   * it on our id, never on an address the survivor's record took over in the merge. Where the
   * merge was still waiting it is called off (and where it was refused, nothing happened):
   * the record comes back linked to the split-off entity, as it was.
   */
  private async undoProviderMerges(tx: LogTransaction, op: AppliedOperation): Promise<void> {
    const { rows } = await tx.query<{ key: string }>(
      `SELECT jsonb_object_keys(flags->'providerMerged') AS key FROM entity
        WHERE id = $1 AND jsonb_typeof(flags->'providerMerged') = 'object'`,
      [op.absorbedId],
    );
    if (rows.length === 0) return;
    const records = rows.map(({ key }) => {
      const [connectionId = '', , ...rest] = key.split('|');
      const outboxKey = providerMergeKey(op.absorbedId, connectionId, op.undoes ?? '', rest.join('|'));
      return { key, connectionId, outboxKey };
    });
    await tx.query(
      `UPDATE outbox SET status = 'superseded', last_error = 'called off by unmerge ' || $3
        WHERE (connection_id, idempotency_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
          AND status = 'pending'`,
      [records.map((r) => r.connectionId), records.map((r) => r.outboxKey), op.operationId],
    );
    // Sent, or on its way (a pusher holds it): the provider has merged, or is merging, the record.
    const { rows: sent } = await tx.query<{ connection_id: string; idempotency_key: string }>(
      `SELECT connection_id::text AS connection_id, idempotency_key FROM outbox
        WHERE (connection_id, idempotency_key) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
          AND status IN ('sent', 'sending')`,
      [records.map((r) => r.connectionId), records.map((r) => r.outboxKey)],
    );
    const merged = new Set(sent.map((r) => `${r.connection_id}|${r.idempotency_key}`));
    const gone = records.filter((r) => merged.has(`${r.connectionId}|${r.outboxKey}`));
    const back = records.filter((r) => !merged.has(`${r.connectionId}|${r.outboxKey}`));
    await tx.query(
      `UPDATE entity SET flags = jsonb_set(
                jsonb_set(flags - 'providerMerged', '{folded}', COALESCE(
                  (SELECT jsonb_agg(k) FROM jsonb_array_elements_text(flags->'folded') AS k
                    WHERE NOT k = ANY($2::text[])), '[]'::jsonb)),
                '{recreateIn}', COALESCE(flags->'recreateIn', '[]'::jsonb) || $3::jsonb)
        WHERE id = $1`,
      [op.absorbedId, back.map((r) => r.key), JSON.stringify([...new Set(gone.map((r) => r.connectionId))])],
    );
  }

  /**
   * Connections hold what we wrote them, even before their report of it comes back (which
   * applies the receipt): a merge or unmerge reads what each holds, and one behind would be
   * owed too little (an address the survivor had lent it stays, and a create that looks
   * records up by address takes the wrong one). The receipts stay unapplied for that report.
   */
  private async seeWritten(
    tx: LogTransaction,
    store: PgMergeStore,
    ref: { entityId: string; workspaceId: string; entityType: string },
  ): Promise<void> {
    const { rows } = await tx.query<{ connection_id: string; heads: string[] }>(
      `SELECT connection_id, heads FROM write_receipt
        WHERE entity_id = $1 AND applied_at IS NULL ORDER BY created_at, idempotency_key`,
      [ref.entityId],
    );
    for (const row of rows)
      await this.options.engine.markSeen(ref.entityId, ref.workspaceId, row.connection_id, row.heads, store);
  }

  /** Archives of folded copies and provider merges; a key already queued (sent, say) is left be. */
  private async queueFoldWrites(tx: LogTransaction, rows: readonly OutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    await tx.query(
      `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, heads,
                           idempotency_key)
       SELECT workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, heads, idempotency_key
         FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, entity_id uuid, entity_type text,
              connection_id uuid, op text, external_id text, fields jsonb, heads text[], idempotency_key text)
       ON CONFLICT (connection_id, idempotency_key) DO NOTHING`,
      [JSON.stringify(rows)],
    );
    for (const row of rows) this.targets.add(row.connection_id);
  }

  /**
   * A record we created in a provider comes back carrying our entity id; link it to that
   * entity before identity runs, so that an echo arriving before the push job stored the
   * link never starts a second entity.
   */
  private async linkEchoedCreates(tx: LogTransaction, events: readonly LogEvent[]): Promise<void> {
    const echoed = events.flatMap((event) => {
      const entityId = event.op === 'upsert' ? originEntityId(event.origin) : undefined;
      return entityId === undefined ? [] : [{ event, entityId }];
    });
    if (echoed.length === 0) return;
    // One statement for the batch, in its order: the first link of a record is the one kept.
    await tx.query(
      `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
       SELECT e.workspace_id, t.conn, e.entity_type, t.ext, e.id
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::text[]) WITH ORDINALITY
              AS t(ws, conn, ext, entity, type, i)
         JOIN entity e ON e.id = t.entity AND e.workspace_id = t.ws AND e.entity_type = t.type
        ORDER BY t.i
       ON CONFLICT DO NOTHING`,
      [
        echoed.map((x) => x.event.workspaceId),
        echoed.map((x) => x.event.connectionId),
        echoed.map((x) => x.event.externalId),
        echoed.map((x) => x.entityId),
        echoed.map((x) => x.event.entityType),
      ],
    );
  }

  /** The provider version each linked record now has: later writes to it are conditional on it. */
  private async recordVersions(tx: LogTransaction, events: readonly LogEvent[]): Promise<void> {
    const latest = new Map<string, LogEvent>();
    for (const event of events)
      if (event.providerVersion !== null && event.op !== 'delete')
        latest.set(`${event.connectionId}|${event.entityType}|${event.externalId}`, event);
    if (latest.size === 0) return;
    const list = [...latest.values()];
    await tx.query(
      `UPDATE source_link l SET provider_version = t.v
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(conn, type, ext, v)
        WHERE l.connection_id = t.conn AND l.entity_type = t.type AND l.external_id = t.ext
          AND ${versionMayReplace('t.v', 'l.provider_version')}`,
      [
        list.map((e) => e.connectionId),
        list.map((e) => e.entityType),
        list.map((e) => e.externalId),
        list.map((e) => e.providerVersion),
      ],
    );
  }

  /**
   * The canonical entity of each event's source record (following a merge), if linked. An
   * edit made in Syncline names its entity; it counts only from the workspace's own
   * connection, and only for an entity of that workspace and type.
   */
  private async entitiesOf(tx: LogTransaction, events: readonly LogEvent[]): Promise<(string | undefined)[]> {
    const isEdit = events.map((e) => userEditOf(e) !== undefined);
    const { rows } = await tx.query<{ i: string; entity_id: string }>(
      `SELECT t.i, COALESCE(e.merged_into, e.id) AS entity_id
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[]) WITH ORDINALITY AS t(conn, type, ext, edit, i)
         JOIN source_link l ON l.connection_id = t.conn AND l.entity_type = t.type AND l.external_id = t.ext
         JOIN entity e ON e.id = l.entity_id
        WHERE NOT t.edit
          -- A copy a merge folded away (foldMirrors): its reports are no one's news.
          AND NOT COALESCE(e.flags->'folded' ? (t.conn::text || '|' || t.type || '|' || t.ext), false)
       UNION ALL
       SELECT t.i, COALESCE(e.merged_into, e.id)
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[]) WITH ORDINALITY AS t(conn, type, ext, edit, i)
         JOIN connection c ON c.id = t.conn AND c.provider = 'syncline'
         JOIN entity e ON e.id::text = t.ext AND e.workspace_id = c.workspace_id AND e.entity_type = t.type
        WHERE t.edit`,
      [
        events.map((e) => e.connectionId),
        events.map((e) => e.entityType),
        events.map((e) => e.externalId),
        isEdit,
      ],
    );
    const out: (string | undefined)[] = events.map(() => undefined);
    for (const row of rows) out[Number(row.i) - 1] = row.entity_id;
    return out;
  }

  /**
   * A person's edit, made in Syncline: merged at the current heads (they saw the current
   * view), as that person. One that settles an open conflict of the entity resolves it.
   */
  private async applyUserEdit(
    tx: LogTransaction,
    store: PgMergeStore,
    entityId: string,
    event: LogEvent,
    edit: UserEdit,
  ): Promise<MergeOutcome> {
    const { engine } = this.options;
    const ref = { entityId, workspaceId: event.workspaceId, entityType: event.entityType };
    const eventKey = `${event.connectionId}:${event.eventKey}`;
    if (edit.resolves !== undefined) {
      const { rows } = await tx.query<{ field: string }>(
        `SELECT field FROM merge_conflict WHERE id::text = $1 AND entity_id = $2 AND status = 'open'`,
        [edit.resolves, entityId],
      );
      const field = rows[0]?.field;
      if (field !== undefined && Object.hasOwn(event.fields, field))
        return engine.resolveConflict(
          {
            ...ref,
            conflictId: edit.resolves,
            field,
            value: event.fields[field],
            userId: edit.userId,
            at: event.eventTime,
            eventKey,
          },
          store,
        );
    }
    return engine.applyInbound(
      {
        ...ref,
        source: { kind: 'user', id: edit.userId },
        eventKey,
        eventTime: event.eventTime,
        fields: event.fields,
      },
      store,
    );
  }

  /**
   * Locks the entities and drops cached documents that are not exactly the stored one: a
   * version this process did not write, or (should a commit have failed after a version
   * was noted) other heads than the row's. Returns the heads each entity's saved view was
   * made at.
   */
  private async lockAndValidate(tx: LogTransaction, ids: readonly string[]): Promise<Map<string, string[]>> {
    const { rows } = await tx.query<{ id: string; version: string; heads: string[] }>(
      'SELECT id, version::text AS version, heads FROM entity WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
      [ids],
    );
    for (const row of rows) {
      const cached = this.options.engine.cachedHeads(row.id);
      const stale = cached !== undefined && cached.length > 0 && !sameSet(cached, row.heads);
      if (this.versions.get(row.id) !== row.version || stale) {
        this.options.engine.forget(row.id);
        this.versions.set(row.id, row.version);
      }
    }
    return new Map(rows.map((row) => [row.id, row.heads]));
  }

  /**
   * Receipts of the batch's records: those not yet applied, and the latest one of each record
   * (recent ones only), whose written values recognise an echo however late it comes.
   */
  private async receiptsOf(tx: LogTransaction, events: readonly LogEvent[]): Promise<Map<string, Receipt[]>> {
    const { rows } = await tx.query<{
      key: string;
      receipt_key: string;
      prior: Record<string, unknown>;
      entity_id: string;
      sent_at: Date;
      heads: string[];
      fields: Record<string, unknown>;
      created_at: Date;
      applied: boolean;
      in_flight: boolean;
    }>(
      // Receipts, and the writes still on their way to these records (claimed, no receipt yet),
      // in one statement: a push that stores its receipt marks its rows sent in the same
      // commit, so every write the provider may have applied is seen as one or the other.
      `WITH t AS (SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(conn, type, ext))
       SELECT * FROM (
         SELECT r.connection_id || '|' || r.entity_type || '|' || r.external_id AS key,
                r.connection_id || '|' || r.idempotency_key AS receipt_key, r.prior, r.entity_id, r.sent_at,
                r.heads, r.fields, r.created_at, r.applied_at IS NOT NULL AS applied, false AS in_flight,
                r.idempotency_key
           FROM write_receipt r
           JOIN t ON r.connection_id = t.conn AND r.entity_type = t.type AND r.external_id = t.ext
          WHERE r.applied_at IS NULL OR r.created_at > now() - interval '10 minutes'
         UNION ALL
         SELECT l.connection_id || '|' || l.entity_type || '|' || l.external_id,
                'in-flight|' || o.id, o.prior, o.entity_id, o.claimed_at, o.heads, o.fields,
                -- applied: an in-flight write is never applied as a receipt (it moves no heads).
                clock_timestamp(), true, true, o.idempotency_key
           FROM t
           JOIN source_link l ON l.connection_id = t.conn AND l.entity_type = t.type AND l.external_id = t.ext
           JOIN outbox o ON o.connection_id = l.connection_id AND o.entity_id = l.entity_id
          WHERE o.status = 'sending' AND o.op IN ('create', 'update')) all_writes
        ORDER BY in_flight, created_at, idempotency_key`,
      [events.map((e) => e.connectionId), events.map((e) => e.entityType), events.map((e) => e.externalId)],
    );
    const out = new Map<string, Receipt[]>();
    for (const row of rows) {
      const list = out.get(row.key) ?? [];
      list.push({
        key: row.receipt_key,
        prior: row.prior,
        entityId: row.entity_id,
        sentAt: row.sent_at,
        heads: row.heads,
        fields: row.fields,
        createdAt: row.created_at,
        applied: row.applied,
        ...(row.in_flight ? { inFlight: true } : {}),
      });
      out.set(row.key, list);
    }
    return out;
  }

  private async markReceiptsApplied(tx: LogTransaction, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    // Keys are "connection|idempotency key" (a connection id holds no "|"). Matched by the
    // primary key's columns: a match on the joined text would read the whole table.
    const split = keys.map((k) => [k.slice(0, k.indexOf('|')), k.slice(k.indexOf('|') + 1)] as const);
    await tx.query(
      `UPDATE write_receipt w SET applied_at = now()
         FROM unnest($1::uuid[], $2::text[]) AS k(connection_id, idempotency_key)
        WHERE w.connection_id = k.connection_id AND w.idempotency_key = k.idempotency_key
          AND w.applied_at IS NULL`,
      [split.map(([c]) => c), split.map(([, i]) => i)],
    );
  }

  private async saveViews(tx: LogTransaction, touched: readonly Touched[]): Promise<void> {
    if (touched.length === 0) return;
    const rows = touched.map((t) => ({
      id: t.entityId,
      fields: t.outcome?.values ?? {},
      provenance: t.outcome?.provenance ?? {},
      heads: t.outcome?.heads ?? [],
      deleted: t.deletedIn,
    }));
    // Each saved entity is announced on commit (NOTIFY is transactional): the API streams
    // it to the workspace's open pages (GET /api/v1/stream).
    const { rows: saved } = await tx.query<{ id: string; version: string }>(
      `WITH saved AS (
         UPDATE entity e
            SET fields = v.fields, provenance = v.provenance, heads = v.heads,
                flags = CASE WHEN jsonb_array_length(v.deleted) = 0 THEN e.flags
                             ELSE jsonb_set(e.flags, '{deletedIn}', COALESCE(e.flags->'deletedIn', '[]'::jsonb) || v.deleted)
                        END,
                version = e.version + 1, updated_at = now()
           FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, fields jsonb, provenance jsonb, heads text[], deleted jsonb)
          WHERE e.id = v.id
         RETURNING e.id, e.version, e.workspace_id, e.entity_type)
       SELECT id, version::text AS version,
              pg_notify('${ENTITY_CHANNEL}', json_build_object('workspaceId', workspace_id, 'id', id,
                        'type', entity_type, 'version', version)::text) AS notified
         FROM saved`,
      [JSON.stringify(rows)],
    );
    for (const row of saved) this.versions.set(row.id, row.version);
  }

  private async writeOutbox(tx: LogTransaction, touched: readonly Touched[]): Promise<void> {
    if (touched.length === 0) return;
    const { rows: linkRows } = await tx.query<{
      entity_id: string;
      connection_id: string;
      external_id: string;
    }>('SELECT entity_id, connection_id, external_id FROM source_link WHERE entity_id = ANY($1::uuid[])', [
      touched.map((t) => t.entityId),
    ]);
    const links = new Map<string, Map<string, string>>();
    for (const row of linkRows) {
      const byConnection = links.get(row.entity_id) ?? new Map<string, string>();
      byConnection.set(row.connection_id, row.external_id);
      links.set(row.entity_id, byConnection);
    }
    const { rows: flagRows } = await tx.query<{
      id: string;
      deleted_in: string[] | null;
      recreate_in: string[] | null;
    }>(
      `SELECT id, ARRAY(SELECT jsonb_array_elements(flags->'deletedIn')->>'connectionId') AS deleted_in,
              ARRAY(SELECT jsonb_array_elements_text(COALESCE(flags->'recreateIn', '[]'::jsonb))) AS recreate_in
         FROM entity WHERE id = ANY($1::uuid[])`,
      [touched.map((t) => t.entityId)],
    );
    const deletedIn = new Map(flagRows.map((r) => [r.id, new Set(r.deleted_in ?? [])]));
    // Connections where the provider merged the entity's own record away (undoProviderMerges).
    const recreateIn = new Map(flagRows.map((r) => [r.id, new Set(r.recreate_in ?? [])]));

    const outbox: OutboxRow[] = [];
    for (const entry of touched) {
      const outcome = entry.outcome;
      if (outcome === undefined || entry.frozen) continue;
      const linked = links.get(entry.entityId) ?? new Map<string, string>();
      const providersLinked = new Set<ProviderKey>();
      const targets = await this.connectionsOf(tx, entry.workspaceId);
      for (const c of targets) if (linked.has(c.id)) providersLinked.add(c.provider);
      const digest = headsDigest(outcome.heads);
      for (const target of targets) {
        if (!isWritable(target.provider, entry.entityType)) continue;
        if (target.status === 'disconnected') continue;
        const externalId = linked.get(target.id);
        const base = {
          workspace_id: entry.workspaceId,
          entity_id: entry.entityId,
          entity_type: entry.entityType,
          connection_id: target.id,
          heads: outcome.heads,
        };
        // A record deleted elsewhere in this batch: the target's own delete policy decides.
        if (entry.deletedIn.length > 0 && externalId !== undefined) {
          if (target.deletePolicy !== 'unlink' && !entry.deletedIn.some((d) => d.connectionId === target.id))
            outbox.push({
              ...base,
              op: 'delete',
              external_id: externalId,
              fields: {},
              idempotency_key: `${entry.entityId}.${target.id}.delete`,
            });
          continue;
        }
        if (externalId !== undefined) {
          const owed = outcome.owed.get(target.id) ?? [];
          if (owed.length === 0) continue;
          outbox.push({
            ...base,
            op: 'update',
            external_id: externalId,
            fields: Object.fromEntries(owed.map((f) => [f, outcome.values[f] ?? null])),
            prior: outcome.held.get(target.id) ?? {},
            idempotency_key: `${entry.entityId}.${target.id}.${digest}`,
          });
          continue;
        }
        // Creates wait for the target's reconcile (see PushService.reconcile): before it, the
        // target's own copy of this record may not be linked yet.
        if (target.status !== 'live' || !target.reconciled || deletedIn.get(entry.entityId)?.has(target.id))
          continue;
        if (
          !canCreateIn(target.provider, entry.entityType, providersLinked) &&
          !recreateIn.get(entry.entityId)?.has(target.id)
        )
          continue;
        const fields = Object.fromEntries(
          Object.entries(outcome.values).filter(([, v]) => v !== null && v !== undefined),
        );
        if (Object.keys(fields).length === 0) continue;
        outbox.push({
          ...base,
          op: 'create',
          external_id: null,
          fields,
          // One key per (entity, target): however many times a create is owed, the provider
          // makes one record (Calendar client ids, HubSpot upsert, the Tasks marker).
          idempotency_key: `${entry.entityId}.${target.id}.create`,
        });
      }
    }
    // Every row carries all a target is owed at its heads, so a pending row that the new one
    // does not replace is out of date (the target has seen those fields since, or they moved on).
    // Association rows are weighed on their own (oweAssociations).
    await tx.query(
      `UPDATE outbox o SET status = 'superseded'
        WHERE o.entity_id = ANY($1::uuid[]) AND o.status = 'pending' AND o.op IN ('update', 'delete')
          AND NOT (o.connection_id || '|' || o.idempotency_key = ANY($2::text[]))`,
      [touched.map((t) => t.entityId), outbox.map((r) => `${r.connection_id}|${r.idempotency_key}`)],
    );
    if (outbox.length === 0) return;
    await tx.query(
      `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, prior, heads,
                           idempotency_key)
       SELECT workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, COALESCE(prior, '{}'),
              heads, idempotency_key
         FROM jsonb_to_recordset($1::jsonb) AS r(workspace_id uuid, entity_id uuid, entity_type text,
              connection_id uuid, op text, external_id text, fields jsonb, prior jsonb, heads text[],
              idempotency_key text)
        -- The connection list is cached for a moment: nothing is owed to one disconnected since.
        WHERE NOT EXISTS (SELECT 1 FROM connection c WHERE c.id = r.connection_id AND c.status = 'disconnected')
       ON CONFLICT (connection_id, idempotency_key) DO UPDATE
         SET fields = EXCLUDED.fields, prior = EXCLUDED.prior, heads = EXCLUDED.heads, status = 'pending',
             attempts = 0
         -- A row set aside (a stale write refused) is owed again if the target still lacks it.
         WHERE outbox.status IN ('pending', 'superseded')`,
      [JSON.stringify(outbox)],
    );
    for (const row of outbox) this.targets.add(row.connection_id);
  }

  private async connectionsOf(tx: LogTransaction, workspaceId: string): Promise<TargetConnection[]> {
    const cached = this.connections.get(workspaceId);
    if (cached && Date.now() - cached.at < this.connectionsTtlMs) return cached.list;
    const { rows } = await tx.query<{
      id: string;
      provider: ProviderKey;
      status: string;
      delete_policy: DeletePolicy;
      reconciled: boolean;
    }>(
      `SELECT id, provider::text AS provider, status::text AS status, delete_policy,
              reconciled_at IS NOT NULL AS reconciled
         FROM connection WHERE workspace_id = $1 AND provider <> 'syncline' ORDER BY id`,
      [workspaceId],
    );
    const list = rows.map((r) => ({
      id: r.id,
      provider: r.provider,
      status: r.status,
      deletePolicy: r.delete_policy,
      reconciled: r.reconciled,
    }));
    this.connections.set(workspaceId, { at: Date.now(), list });
    return list;
  }
}
