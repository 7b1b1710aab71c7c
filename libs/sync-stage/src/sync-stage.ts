import { type MergeEngine, PgMergeStore, policyChangeOf } from '@syncline/conflicts';
import { withoutAssociations } from '@syncline/core';
import type { IdentityService } from '@syncline/identity';
import type { LogEvent, LogTransaction } from '@syncline/log';
import { claimBareAddresses, writeAssociations } from './associations';
import { type TargetConnection, TargetConnections } from './connections';
import {
  type AppliedOperation,
  appliedOf,
  applyIdentityOperation,
  identityOperations,
} from './identity-operations';
import { contributionChanges, organisationPairs, peopleMoved } from './insights/contributions';
import {
  InsightsFold,
  type InsightsFoldOptions,
  type InsightsSession,
  liveConnections,
} from './insights/insights-fold';
import { timeZoneChangeOf } from './insights/time-zone-event';
import { watermarkOf } from './insights/watermark-event';
import { applyUserEdit, mergeReport, userEditOf } from './merge';
import type { OutboxRow } from './outbox/outbox-row';
import { queueFoldWrites, writeOutbox } from './outbox/outbox-writer';
import { type Folds, foldMirrors } from './provider-merges';
import { markReceiptsApplied, receiptsFor, receiptsOf } from './receipts';
import { entitiesOf, linkEchoedCreates, recordVersions, withoutDisconnected } from './records';
import { oweAssociations } from './relation-writeback';
import { refreshEnds, writeCarried, writeDerived } from './relations';
import { type Touched, touchedEntry } from './touched';
import { sameSet, saveViews, viewMoved } from './views';
import { foldWriteEvents, isWriteEvent, mayLinkRecord } from './write-events';

/** Part of a batch the stage takes at once: reports (or one merge), with our writes folded around them. */
export interface Segment {
  /** Claims and receipts folded first: every report of their record in the segment came after them. */
  writesBefore: LogEvent[];
  events: LogEvent[];
  /** Claims and receipts folded last: every report of their record in the segment came before them. */
  writesAfter: LogEvent[];
}

/**
 * A batch as the stage takes it: a merge or unmerge (op `merge`: ours, or a provider's merge
 * notice) alone, a new set of field policies (op `policy`) alone, a connection's watermark
 * (op `watermark`: the insights take it after the activities before it) alone, a workspace's
 * new time zone (op `time_zone`) alone, the events
 * between them together. The events before a policy event are merged under the set before it, those after
 * it under the new one. A merge moves links and reads which records
 * each connection holds; the events before it must be placed on the entities they named then,
 * and those after it must not be seen by it, as when the group's batches ended around it.
 *
 * The push stage's claims and receipts (write-events.ts) concern one record each, and are
 * seen by that record's reports only: one whose record no report of the segment named yet is
 * folded before the segment's reports; one after a report of its record, after them, and a
 * later report of that record then opens the next segment. A create's receipt (or an
 * `existing`: a refused create's) links a record that identity may weigh in placing any report
 * of its connection: after one, it opens the next segment.
 */
const SEGMENTS_OF_THEIR_OWN: ReadonlySet<string> = new Set(['merge', 'policy', 'watermark', 'time_zone']);

export function segmentsOf(events: readonly LogEvent[]): Segment[] {
  const segments: Segment[] = [];
  let current: Segment = { writesBefore: [], events: [], writesAfter: [] };
  const named = new Set<string>();
  const trailed = new Set<string>();
  const connections = new Set<string>();
  const close = () => {
    if (current.writesBefore.length + current.events.length + current.writesAfter.length > 0)
      segments.push(current);
    current = { writesBefore: [], events: [], writesAfter: [] };
    named.clear();
    trailed.clear();
    connections.clear();
  };
  for (const event of events) {
    if (SEGMENTS_OF_THEIR_OWN.has(event.op)) {
      close();
      segments.push({ writesBefore: [], events: [event], writesAfter: [] });
      continue;
    }
    const record = `${event.connectionId}|${event.entityType}|${event.externalId}`;
    if (isWriteEvent(event)) {
      if (mayLinkRecord(event) && connections.has(event.connectionId)) close();
      if (named.has(record)) {
        current.writesAfter.push(event);
        trailed.add(record);
      } else current.writesBefore.push(event);
      continue;
    }
    if (trailed.has(record)) close();
    named.add(record);
    connections.add(event.connectionId);
    current.events.push(event);
  }
  close();
  return segments;
}

export interface SyncStageOptions {
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
  /** The activity insights' windows (libs/insights): the zone days are cut in, the lateness allowed. */
  insights?: InsightsFoldOptions;
}

/** What a batch leaves owed outside its transaction: the caller acts on it once it commits. */
export interface StageOwed {
  /** Connections owed writes (a push job each). */
  push: string[];
  /** Connections to read again: they notified changes of records not yet known, or of associations. */
  pull: string[];
}

/**
 * The sync stage of the pipeline, run as the `sync` log consumer group: for one partition's
 * batch, in the transaction that commits the group's offset, it links every source record to
 * its canonical entity (identity), applies write receipts (a connection reporting what we
 * wrote is our echo: its synced heads move, nothing else does), merges each change into the
 * entity's document under the field policies, refreshes the entity's view row, and inserts
 * an outbox row for every connection owed something. Nothing leaves the process here: `handle`
 * returns the connections owed writes and reads, for the caller to act on after the commit.
 *
 * One entity's source records may sit in different partitions, so two members of the group
 * can reach the same entity at once: its `entity` row is locked (in id order, so two batches
 * never deadlock on each other) for the rest of the transaction, and a cached document is
 * reused only if the row's version is the one this process last wrote.
 */
export class SyncStage {
  private readonly versions = new Map<string, string>();
  /** The last offset this process folded per partition (see handle). */
  private readonly folded = new Map<number, number>();
  private readonly connections: TargetConnections;
  private readonly insights: InsightsFold;

  constructor(private readonly options: SyncStageOptions) {
    this.connections = new TargetConnections(options.connectionsTtlMs ?? 2_000);
    this.insights = new InsightsFold(options.insights ?? { timeZone: 'UTC' });
  }

  async handle(tx: LogTransaction, events: readonly LogEvent[]): Promise<StageOwed> {
    const touchedIds: string[] = [];
    const owed = { push: new Set<string>(), pull: new Set<string>() };
    // The policies this process read stay the ones in force while it folds a partition's
    // batches back to back; a batch that does not follow the last one it folded there (the
    // partition was another member's meanwhile, or that batch rolled back) may come after a
    // policy event folded elsewhere: they are read again.
    const firsts = new Map<number, number>();
    const lasts = new Map<number, number>();
    for (const e of events) {
      if (!firsts.has(e.partition)) firsts.set(e.partition, e.offset);
      lasts.set(e.partition, e.offset);
    }
    if ([...firsts].some(([partition, offset]) => this.folded.get(partition) !== offset - 1))
      this.options.engine.invalidatePolicies();
    const insights = this.insights.session(tx, {
      live: (workspaceId) => liveConnections(tx, workspaceId),
      targets: (workspaceId) => this.connections.of(tx, workspaceId),
    });
    try {
      const taken = await withoutDisconnected(tx, events);
      for (const { writesBefore, events: reports, writesAfter } of segmentsOf(taken)) {
        const mark = reports.length === 1 ? watermarkOf(reports[0]!) : undefined;
        if (mark !== undefined) {
          await insights.watermark(mark);
          continue;
        }
        const zone = reports.length === 1 ? timeZoneChangeOf(reports[0]!) : undefined;
        if (zone !== undefined) {
          await insights.timeZone(zone);
          continue;
        }
        const policy = reports.length === 1 ? policyChangeOf(reports[0]!) : undefined;
        if (policy !== undefined) {
          const { workspaceId } = reports[0]!;
          await this.options.engine.replacePolicies(
            workspaceId,
            policy.entityType,
            policy.policies,
            policy.version,
            new PgMergeStore(tx),
          );
          continue;
        }
        for (const id of await foldWriteEvents(tx, writesBefore)) owed.push.add(id);
        for (let rest = reports; rest.length > 0; )
          rest = rest.slice(await this.handleBatch(tx, rest, touchedIds, owed, insights));
        for (const id of await foldWriteEvents(tx, writesAfter)) owed.push.add(id);
      }
      // The batch's processing time is the log's (its latest ingest): a fold of the log sees the same.
      const now = Math.max(0, ...events.map((e) => e.ingestedAt.getTime()));
      for (const id of await insights.finish(now, new Set(events.map((e) => e.workspaceId))))
        owed.push.add(id);
    } catch (error) {
      // The transaction rolls back: cached documents (and policies) ahead of the database must go.
      insights.abort();
      this.options.engine.invalidatePolicies();
      for (const e of events) this.folded.delete(e.partition);
      for (const id of touchedIds) {
        this.options.engine.forget(id);
        this.versions.delete(id);
      }
      throw error;
    }
    for (const [partition, offset] of lasts) this.folded.set(partition, offset);
    return { push: [...owed.push], pull: [...owed.pull] };
  }

  /**
   * Places the events up to and including the first that made a join (all of them when none
   * did) and returns how many it took: the rest is a batch of its own, as if the group's batch
   * had ended at the joining record.
   */
  private async handleBatch(
    tx: LogTransaction,
    segment: readonly LogEvent[],
    touchedIds: string[],
    owed: { push: Set<string>; pull: Set<string> },
    insights: InsightsSession,
  ): Promise<number> {
    const { identity, engine } = this.options;
    const connectionsOf = (workspaceId: string): Promise<TargetConnection[]> =>
      this.connections.of(tx, workspaceId);
    // A record's CRM associations ride on its fields (ASSOCIATIONS_FIELD) but are no field:
    // identity and merge never see them; writeCarried below does.
    const stripped = segment.map((e) => {
      const fields = withoutAssociations(e.fields);
      return fields === e.fields ? e : { ...e, fields };
    });
    await linkEchoedCreates(tx, stripped);
    // Edits made in Syncline name their entity: identity has nothing to resolve.
    const resolved = [...stripped.keys()].filter((i) => userEditOf(stripped[i]!) === undefined);
    const changes = resolved.map((i) => ({
      ...stripped[i]!,
      partial: stripped[i]!.origin?.partial === true,
    }));
    // A record joining two entities moves links: the events before it are placed (documents,
    // views, writes) on the entities they named then, and the record opens the next batch.
    const placed = await identity.handleUntilJoin(tx, changes);
    const taken =
      placed.taken === resolved.length
        ? segment.length
        : placed.joins.size > 0
          ? resolved[placed.taken - 1]! + 1
          : resolved[placed.taken]!;
    // Identity's indexes are of the events it resolved; from here on, of the events taken.
    const events = stripped.slice(0, taken);
    const carrying = segment.slice(0, taken);
    const joins = new Map([...placed.joins].map(([i, payloads]) => [resolved[i]!, payloads] as const));

    await recordVersions(tx, events);
    const operations = await identityOperations(tx, events);
    // Merges identity made itself (a record whose keys named two entities), before that record.
    const joined = new Map<number, AppliedOperation[]>();
    for (const [i, payloads] of joins) joined.set(i, payloads.map(appliedOf));
    const allOperations = [...operations.values(), ...[...joined.values()].flat()];
    // Before the batch's events are placed: a copy a merge folds away is nobody's from here on.
    const folds = new Map<string, Folds>();
    for (const op of allOperations)
      if (op.kind === 'merge')
        folds.set(
          op.operationId,
          await foldMirrors(tx, op, () => connectionsOf(op.workspaceId), this.options),
        );
    const entityOf = await entitiesOf(tx, events);
    // A notification about a record identity could not place: the full record is read now.
    // An association change only says that a pair changed: the pull reads the record with all of them.
    events.forEach((e, i) => {
      if (
        e.op === 'upsert' &&
        e.origin?.partial === true &&
        (entityOf[i] === undefined || e.origin.associationChange === true)
      )
        owed.pull.add(e.connectionId);
    });
    // Entities a merge or unmerge of the batch moves (a frozen one is among them).
    const operated = new Set(allOperations.flatMap((o) => [o.survivorId, o.absorbedId]));
    const ids = [
      ...new Set([...entityOf.filter((id): id is string => id !== undefined), ...operated]),
    ].sort();
    if (ids.length === 0) return taken;
    touchedIds.push(...ids);
    const storedHeads = await this.lockAndValidate(tx, ids);

    const receipts = await receiptsOf(tx, events);
    // Appended changes, synced heads and conflicts go out in a few multi-row statements at the
    // end of the batch (or before a load, compaction or conflict read that needs them), not
    // one statement each; the documents not cached are read in a few statements up front.
    const store = new PgMergeStore(tx, { deferWrites: true });
    await engine.prefetch(ids, store);
    const touched = new Map<string, Touched>();
    const applied: string[] = [];
    // Records a merge leaves twice in one connection: our own copy archived there, or both the
    // provider's own merged there by the provider.
    const foldWrites: OutboxRow[] = [];

    // After each event, the connections in step with the entities it moved are marked as having
    // seen their current values (moving them owes nobody anything new). Per event, not per batch:
    // what a connection has seen, and so which later edits are true conflicts, must not depend on
    // where the group's batches happened to end (a replay folds with other batch sizes).
    const catchUp = async (ids: Iterable<string>) => {
      for (const id of ids) {
        const entry = touched.get(id);
        if (entry !== undefined)
          await engine.catchUp(
            { entityId: id, workspaceId: entry.workspaceId, entityType: entry.entityType },
            store,
          );
      }
    };
    for (const [i, event] of events.entries()) {
      for (const join of joined.get(i) ?? []) {
        await applyIdentityOperation(tx, engine, store, event, join, touched, foldWrites, folds);
        await catchUp([join.survivorId, join.absorbedId]);
      }
      const operation = operations.get(i);
      if (operation !== undefined) {
        await applyIdentityOperation(tx, engine, store, event, operation, touched, foldWrites, folds);
        await catchUp([operation.survivorId, operation.absorbedId]);
        continue;
      }
      const entityId = entityOf[i];
      if (entityId === undefined || event.op === 'merge') continue;
      const entry = touchedEntry(touched, {
        entityId,
        workspaceId: event.workspaceId,
        entityType: event.entityType,
      });
      const edit = userEditOf(event);
      if (edit !== undefined) entry.outcome = await applyUserEdit(tx, engine, store, entityId, event, edit);
      else {
        await mergeReport(tx, engine, store, entry, event, receiptsFor(receipts, event), applied);
      }
      await catchUp([entityId]);
    }
    await markReceiptsApplied(tx, applied);
    for (const entry of touched.values()) {
      const ref = { entityId: entry.entityId, workspaceId: entry.workspaceId, entityType: entry.entityType };
      entry.outcome ??= await engine.outcome(ref, store);
    }
    const saved = await saveViews(
      tx,
      [...touched.values()].filter((t) =>
        viewMoved(t, storedHeads.get(t.entityId), operated.has(t.entityId)),
      ),
    );
    for (const row of saved) this.versions.set(row.id, row.version);
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
    const relationEnds = [...touched.values()]
      .filter((t) => t.entityType === 'person' || t.entityType === 'company' || t.entityType === 'deal')
      .map((t) => t.entityId);
    const pairsBefore = await organisationPairs(tx, relationEnds);
    const removals = await writeCarried(tx, carrying, entityOf);
    await refreshEnds(tx, [...touched.keys()]);
    const ends = [...touched.values()].map((t) => ({
      entityId: t.entityId,
      workspaceId: t.workspaceId,
      entityType: t.entityType,
      frozen: t.frozen === true,
    }));
    await writeDerived(tx, ends);
    // Only a workspace that keeps bare addresses (no person made for them) has any to claim.
    const claiming = [...touched.values()]
      .filter(
        (t) =>
          t.entityType === 'person' && identity.settingsFor(t.workspaceId).participants === 'bare-address',
      )
      .map((t) => t.entityId);
    await claimBareAddresses(tx, claiming);
    // What the batch's activities (and those of people it merged, unmerged or gave an address) count for now.
    const connectionOf = new Map<string, string>();
    for (const [i, e] of events.entries()) {
      const id = entityOf[i];
      if (id !== undefined) connectionOf.set(id, e.connectionId);
    }
    for (const t of touched.values())
      if (t.entityType === 'person' || t.entityType === 'company' || t.entityType === 'deal')
        insights.touch(t.workspaceId, [t.entityId]);
    const diffs = await contributionChanges(
      tx,
      identity,
      [...touched.values()].map((t) => ({
        entityId: t.entityId,
        workspaceId: t.workspaceId,
        entityType: t.entityType,
        values: t.outcome?.values ?? {},
        connectionId: connectionOf.get(t.entityId),
      })),
      [...operated, ...claiming, ...peopleMoved(pairsBefore, await organisationPairs(tx, relationEnds))],
      async (workspaceId) =>
        (await connectionsOf(workspaceId)).flatMap((c) =>
          c.accountAddress === null ? [] : [c.accountAddress],
        ),
    );
    for (const [workspaceId, list] of diffs.diffs) await insights.diffs(workspaceId, list);
    for (const [workspaceId, ids] of diffs.replaced) await insights.replace(workspaceId, ids);
    // Archives and provider merges first: pushed in outbox order, a copy (or the merged-away
    // record) is gone before a write that takes its unique values (its email) reaches the
    // record the connection keeps.
    for (const id of await queueFoldWrites(tx, foldWrites)) owed.push.add(id);
    // A merged-away entity owes nothing (its pending rows were dropped by the merge).
    const owing = [...touched.values()].filter((t) => !t.frozen);
    for (const row of await writeOutbox(tx, owing, connectionsOf)) {
      owed.push.add(row.connection_id);
      // Its receipt reads the fields at these heads, likely many merges later.
      if (row.op !== 'delete') engine.keepWritten(row.entity_id, row.connection_id, row.heads);
    }
    // Associations one CRM made, owed to the others (and who took part in an activity, to its
    // engagements): after the creates above, which an association to a new record waits for.
    for (const id of await oweAssociations(tx, ends, removals, connectionsOf)) owed.push.add(id);
    // In this transaction, for entities it holds: a snapshot must never hold uncommitted changes.
    for (const id of touched.keys()) await engine.compactIfDue(id, store);
    await store.flush();
    return taken;
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
}
