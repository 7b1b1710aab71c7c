import * as Automerge from '@automerge/automerge';
import { type InboundChange, InMemoryMergeStore, MergeEngine } from '@syncline/conflicts';
import { emit, log } from './support';

/**
 * Inbound changes over 10,000 deals, three connections each, with a hot set (80% of the
 * changes hit 20% of the entities), through the engine (LRU + in-memory store), against the
 * naive path (load → change → save per event) in the same run. About 10% of the changes
 * re-deliver values the source already had, and every 20th change is followed by a
 * writeback receipt (markSeen). Single process, single core.
 */
export async function run(
  args: { total?: number; entities?: number; naive?: number; cache?: number } = {},
): Promise<void> {
  const total = args.total ?? 60_000;
  const entities = args.entities ?? 10_000;
  const naiveTotal = args.naive ?? 3_000;
  const cacheSize = args.cache ?? 3_000;
  const workspaceId = '0190a000-0000-7000-8000-000000000001';
  const connections = [1, 2, 3].map((n) => `0190a000-0000-7000-8000-00000000000${n}`);
  const fields = ['stage', 'owner', 'amount', 'closeDate', 'name', 'pipeline', 'priority', 'nextStep'];
  const entityIds = Array.from(
    { length: entities },
    (_, i) => `0190b000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`,
  );

  // A deterministic generator, so runs compare.
  let seed = 42;
  const rand = () => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const hot = Math.floor(entities / 5);
  const lastSent = new Map<string, Record<string, unknown>>();
  const events: InboundChange[] = [];
  for (let i = 0; i < total; i++) {
    const entity = rand() < 0.8 ? Math.floor(rand() * hot) : hot + Math.floor(rand() * (entities - hot));
    const entityId = entityIds[entity]!;
    const connectionId = connections[Math.floor(rand() * 3)]!;
    const key = `${entityId}:${connectionId}`;
    let changed: Record<string, unknown>;
    const previous = lastSent.get(key);
    if (previous !== undefined && rand() < 0.1) {
      changed = previous;
    } else {
      changed = {};
      const n = 1 + Math.floor(rand() * 3);
      for (let k = 0; k < n; k++) {
        const field = fields[Math.floor(rand() * fields.length)]!;
        changed[field] =
          field === 'amount' ? Math.floor(rand() * 100_000) : `${field}-${Math.floor(rand() * 50)}`;
      }
      lastSent.set(key, changed);
    }
    events.push({
      entityId,
      workspaceId,
      entityType: 'deal',
      source: { kind: 'connection', id: connectionId },
      eventKey: `${connectionId.slice(-1)}:${i}`,
      eventTime: new Date(1_790_000_000_000 + i * 50),
      fields: changed,
    });
  }
  const fieldChanges = events.reduce((n, e) => n + Object.keys(e.fields).length, 0);

  const store = new InMemoryMergeStore();
  const engine = new MergeEngine(store, { cacheSize, compactAfterBytes: 16 * 1024 });
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
