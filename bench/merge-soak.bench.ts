import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type ConflictRecord, InMemoryMergeStore, MergeEngine } from '@syncline/conflicts';
import { dealWorkload, WORKLOAD_WORKSPACE } from './merge-workload';
import { emit, log } from './support';

/**
 * Memory soak: N merges (default 1,000,000) over 10,000 deals, three connections each,
 * with the merge bench's hot set (80% of the changes hit 20% of the entities), through the
 * engine with the in-memory store, the LRU (count and byte caps), background compaction and
 * writeback receipts. After a warm-up, resident memory is sampled every 50,000 merges; the
 * drift is the last sample against the first. Events are generated on the fly, so the bench
 * itself holds nothing per merge. What still grows with N is the stored history (snapshots
 * keep every change), a few bytes per merge.
 */
export async function run(
  args: {
    merges?: number;
    entities?: number;
    cache?: number;
    cacheMb?: number;
    warmup?: number;
    every?: number;
  } = {},
): Promise<void> {
  const merges = args.merges ?? 1_000_000;
  const entities = args.entities ?? 10_000;
  const every = args.every ?? 50_000;
  const warmup = args.warmup ?? Math.max(every, Math.floor(merges / 10 / every) * every);
  const workspaceId = WORKLOAD_WORKSPACE;
  const { connections, next } = dealWorkload(entities, 7);

  const store = new SoakStore();
  const engine = new MergeEngine(store, {
    cacheSize: args.cache ?? 3_000,
    cacheBytes: (args.cacheMb ?? 4) * 1024 * 1024,
    compactAfterBytes: 16 * 1024,
    compactAfterChunks: 16,
  });
  log(`merge-soak: ${merges} merges over ${entities} entities, warm-up ${warmup}, sample every ${every}`);
  const samples: number[] = [];
  const stored: number[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < merges; i++) {
    const event = next(i);
    await engine.applyInbound(event);
    if (i % 20 === 19) await engine.markSeen(event.entityId, workspaceId, connections[((i / 20) % 3) | 0]!);
    if (i % 1000 === 999) await engine.compactDue();
    if ((i + 1) % every === 0 && i + 1 >= warmup) {
      // Sampled after a full collection, so the samples measure what is retained, not when
      // V8 last happened to collect.
      gc();
      const rss = process.memoryUsage().rss / 2 ** 20;
      samples.push(rss);
      const storeMb = store.storedBytes() / 2 ** 20;
      stored.push(storeMb);
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      log(
        `merge-soak: ${i + 1} rss ${rss.toFixed(0)} MB, store ${storeMb.toFixed(0)} MB, heap ${(heapUsed / 2 ** 20).toFixed(0)} MB, array buffers ${(arrayBuffers / 2 ** 20).toFixed(0)} MB, conflicts ${store.conflictsRecorded}, cached ${JSON.stringify(engine.cached)}, stats ${JSON.stringify(engine.stats)}`,
      );
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const first = samples[0] ?? 0;
  const last = samples.at(-1) ?? 0;
  emit({
    bench: 'merge-soak',
    merges,
    seconds: Number(seconds.toFixed(1)),
    rss_first_mb: Math.round(first),
    rss_last_mb: Math.round(last),
    rss_max_mb: Math.round(Math.max(0, ...samples)),
    drift_pct: first === 0 ? 0 : Number((((last - first) / first) * 100).toFixed(1)),
    // What the in-memory store (PostgreSQL's stand-in) holds: the documents' stored history.
    store_first_mb: Math.round(stored[0] ?? 0),
    store_last_mb: Math.round(stored.at(-1) ?? 0),
    merges_per_s: Math.round(merges / seconds),
    samples: samples.length,
    compactions: engine.stats.compactions,
    evictions: engine.stats.evictions,
  });
}

/** A full garbage collection, without needing `--expose-gc` on the command line. */
function gc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * The in-memory store, except that conflicts are counted, not kept: in production they are
 * rows in PostgreSQL, and a list of a million of them in this process would measure the test
 * double, not the engine. Documents, chunks and synced heads are kept as usual.
 */
class SoakStore extends InMemoryMergeStore {
  conflictsRecorded = 0;

  /** Bytes of stored snapshots and change chunks. */
  storedBytes(): number {
    let bytes = 0;
    for (const doc of this.documents.values()) {
      bytes += doc.snapshot?.length ?? 0;
      for (const c of doc.chunks) bytes += c.chunk.length;
    }
    return bytes;
  }

  override async recordConflicts(conflicts: readonly ConflictRecord[]): Promise<void> {
    this.conflictsRecorded += conflicts.length;
  }
}
