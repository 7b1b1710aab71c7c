import * as Automerge from '@automerge/automerge';
import { type InboundChange, InMemoryMergeStore, MergeEngine } from '@syncline/conflicts';
import { dealWorkload, WORKLOAD_WORKSPACE } from './merge-workload';
import { emit, log } from './support';

/**
 * Inbound changes over 10,000 deals, three connections each, with a hot set (80% of the
 * changes hit 20% of the entities), through the engine (LRU + in-memory store), against the
 * naive path (load → change → save per event) in the same run. About 10% of the changes
 * re-deliver values the source already had, and every 20th change is followed by a
 * writeback receipt (markSeen). Single process, single core.
 */
export async function run(
  args: { total?: number; entities?: number; naive?: number; cache?: number; cacheMb?: number } = {},
): Promise<void> {
  const total = args.total ?? 60_000;
  const entities = args.entities ?? 10_000;
  const naiveTotal = args.naive ?? 3_000;
  const cacheSize = args.cache ?? 3_000;
  // The engine's own default (64 MB) unless given: a replay's whole workspace held needs more.
  const cacheBytes = (args.cacheMb ?? 64) * 1024 * 1024;
  const workspaceId = WORKLOAD_WORKSPACE;
  const { connections, entityIds, fields, next } = dealWorkload(entities, 42);
  const events: InboundChange[] = Array.from({ length: total }, (_, i) => next(i));
  const fieldChanges = events.reduce((n, e) => n + Object.keys(e.fields).length, 0);

  const store = new InMemoryMergeStore();
  const engine = new MergeEngine(store, { cacheSize, cacheBytes, compactAfterBytes: 16 * 1024 });
  log(
    `merge: ${total} changes (${fieldChanges} field changes) over ${entities} entities, cache ${cacheSize}`,
  );
  const started = process.hrtime.bigint();
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    await engine.applyInbound(event);
    if (i % 20 === 19) {
      const target = connections[((i / 20) % 3) | 0]!;
      await engine.markSeen(event.entityId, workspaceId, target);
    }
    if (i % 1000 === 999) await engine.compactDue();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const changesPerS = total / seconds;
  const fieldChangesPerS = fieldChanges / seconds;
  log(`merge: engine ${seconds.toFixed(2)} s; stats ${JSON.stringify(engine.stats)}`);

  // Naive: every event loads the whole document, changes it, saves it all again. It starts
  // from the documents the engine built, so both paths work on documents of the same size.
  const naiveStore = new Map<string, Uint8Array>();
  const naiveEvents = events.slice(0, naiveTotal).map((e, i) => ({ ...e, eventKey: `naive:${i}` }));
  for (const { entityId } of naiveEvents) {
    const stored = store.documents.get(entityId);
    if (stored === undefined || naiveStore.has(entityId)) continue;
    let doc = Automerge.init<Record<string, unknown>>();
    if (stored.snapshot !== null) doc = Automerge.loadIncremental(doc, stored.snapshot);
    for (const { chunk } of stored.chunks) doc = Automerge.loadIncremental(doc, chunk);
    naiveStore.set(entityId, Automerge.save(doc));
    Automerge.free(doc);
  }
  const naiveStarted = process.hrtime.bigint();
  for (const event of naiveEvents) {
    const bytes = naiveStore.get(event.entityId);
    const actor = event.source.id.replaceAll('-', '');
    let doc =
      bytes === undefined
        ? Automerge.init<Record<string, unknown>>({ actor })
        : Automerge.load<Record<string, unknown>>(bytes, { actor });
    doc = Automerge.change(
      doc,
      { time: Math.floor(event.eventTime.getTime() / 1000), message: event.eventKey },
      (d) => {
        for (const [field, value] of Object.entries(event.fields)) {
          d[field] = new Automerge.ImmutableString(JSON.stringify(value));
        }
      },
    );
    naiveStore.set(event.entityId, Automerge.save(doc));
    Automerge.free(doc);
  }
  const naiveSeconds = Number(process.hrtime.bigint() - naiveStarted) / 1e9;
  const naiveFieldChanges = naiveEvents.reduce((n, e) => n + Object.keys(e.fields).length, 0);
  const naivePerS = naiveFieldChanges / naiveSeconds;

  // Document size: 1,000 edits from 3 sources to one entity, compacted.
  const sizeStore = new InMemoryMergeStore();
  const sizeEngine = new MergeEngine(sizeStore);
  const one = entityIds[0]!.replace('0190b000', '0190c000');
  for (let i = 0; i < 1000; i++) {
    const field = fields[(i * 7) % fields.length]!;
    await sizeEngine.applyInbound({
      entityId: one,
      workspaceId,
      entityType: 'deal',
      source: { kind: 'connection', id: connections[i % 3]! },
      eventKey: `size:${i}`,
      eventTime: new Date(1_790_000_000_000 + i * 1000),
      fields: { [field]: field === 'amount' ? 1000 + i * 13 : `${field} ${i % 17}` },
    });
    if (i % 10 === 9) await sizeEngine.markSeen(one, workspaceId, connections[Math.floor(i / 10) % 3]!);
  }
  await sizeEngine.compact(one, workspaceId);
  const docBytes = sizeStore.documents.get(one)?.snapshot?.length ?? 0;

  emit({
    bench: 'merge',
    changes_per_s: Math.round(fieldChangesPerS),
    naive_changes_per_s: Math.round(naivePerS),
    ratio: Number((fieldChangesPerS / naivePerS).toFixed(1)),
    doc_bytes_after_1000_edits: docBytes,
    inbound_changes_per_s: Math.round(changesPerS),
    total_changes: total,
    field_changes: fieldChanges,
    entities,
    unchanged_skipped: engine.stats.unchanged,
    cache_misses: engine.stats.cacheMisses,
    compactions: engine.stats.compactions,
  });
}
