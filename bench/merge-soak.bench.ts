// First, as a bare import (which import sorting keeps in place): it catches Automerge's
// WebAssembly memory as Automerge loads. Sorted in with the others, it came after
// @syncline/conflicts, and the soak reported 0 MB for Automerge.
import '../libs/conflicts/test/wasm-memory';

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { inTransaction } from '@syncline/core';
import { Pool } from 'pg';
import { automergeMemoryBytes } from '../libs/conflicts/test/wasm-memory';
import { dealWorkload, WORKLOAD_WORKSPACE } from './merge-workload';
import { emit, freshBenchDatabase, log } from './support';

/**
 * Memory soak: N merges (default 1,000,000) over 10,000 deals, three connections each, with
 * the merge bench's hot set (80% of the changes hit 20% of the entities), through the engine
 * as the sync stage runs it: batches of `batch` changes in one PostgreSQL transaction each,
 * appended changes and synced heads written at the batch's end, due documents compacted in
 * the batch, the LRU (count and memory caps) freeing what it evicts, and writeback receipts
 * (`markSeen`). Documents, history and conflicts live in PostgreSQL, as in production, so
 * what this process holds is the engine's. After a warm-up, resident memory is sampled every
 * 50,000 merges after a full collection; the drift is the last sample against the first.
 */
export async function run(
  args: {
    merges?: number;
    entities?: number;
    cache?: number;
    cacheMb?: number;
    warmup?: number;
    every?: number;
    batch?: number;
  } = {},
): Promise<void> {
  const merges = args.merges ?? 1_000_000;
  const entities = args.entities ?? 10_000;
  const every = args.every ?? 50_000;
  const batch = args.batch ?? 200;
  const warmup = args.warmup ?? Math.max(every, Math.floor(merges / 10 / every) * every);
  const workspaceId = WORKLOAD_WORKSPACE;
  const { connections, next } = dealWorkload(entities, 7);

  const pool = new Pool({ connectionString: await freshBenchDatabase('syncline_bench_merge_soak'), max: 2 });
  const engine = new MergeEngine(new PgMergeStore(pool), {
    cacheSize: args.cache ?? 3_000,
    cacheBytes: (args.cacheMb ?? 64) * 1024 * 1024,
    compactAfterBytes: 16 * 1024,
    compactAfterChunks: 16,
  });
  log(
    `merge-soak: ${merges} merges over ${entities} entities in batches of ${batch}, warm-up ${warmup}, sample every ${every}`,
  );
  const samples: number[] = [];
  const wasm: number[] = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < merges; ) {
    await inTransaction(pool, async (client) => {
      const store = new PgMergeStore(client, { deferWrites: true });
      const touched = new Set<string>();
      for (const end = Math.min(merges, i + batch); i < end; i++) {
        const event = next(i);
        touched.add(event.entityId);
        await engine.applyInbound(event, store);
        if (i % 20 === 19)
          await engine.markSeen(
            event.entityId,
            workspaceId,
            connections[((i / 20) % 3) | 0]!,
            undefined,
            store,
          );
      }
      for (const entityId of touched) await engine.compactIfDue(entityId, store);
      await store.flush();
    });
    if (i % every === 0 && i >= warmup) {
      // Sampled after a full collection, so the samples measure what is retained, not when
      // V8 last happened to collect.
      gc();
      const { rss, heapUsed, arrayBuffers, external } = process.memoryUsage();
      samples.push(rss / 2 ** 20);
      wasm.push(automergeMemoryBytes() / 2 ** 20);
      const mb = (n: number) => `${(n / 2 ** 20).toFixed(0)} MB`;
      log(
        `merge-soak: ${i} rss ${mb(rss)}, heap total ${mb(process.memoryUsage().heapTotal)}, automerge ${mb(automergeMemoryBytes())}, heap ${mb(heapUsed)}, external ${mb(external)}, array buffers ${mb(arrayBuffers)}, cached ${JSON.stringify(engine.cached)}, stats ${JSON.stringify(engine.stats)}`,
      );
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await pool.end();
  const first = samples[0] ?? 0;
  const last = samples.at(-1) ?? 0;
  emit({
    bench: 'merge-soak',
    merges,
    seconds: Number(seconds.toFixed(1)),
    rss_first_mb: Math.round(first),
    rss_last_mb: Math.round(last),
    rss_min_mb: Math.round(Math.min(...samples)),
    rss_max_mb: Math.round(Math.max(0, ...samples)),
    drift_pct: first === 0 ? 0 : Number((((last - first) / first) * 100).toFixed(1)),
    automerge_first_mb: Math.round(wasm[0] ?? 0),
    automerge_last_mb: Math.round(wasm.at(-1) ?? 0),
    merges_per_s: Math.round(merges / seconds),
    samples: samples.length,
    cache_bytes: engine.cached.bytes,
    cache_documents: engine.cached.documents,
    compactions: engine.stats.compactions,
    evictions: engine.stats.evictions,
  });
}

/** A full garbage collection, without needing `--expose-gc` on the command line. */
function gc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
