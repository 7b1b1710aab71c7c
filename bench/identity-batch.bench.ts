import { DEFAULT_SETTINGS, MatchIndex, Resolver, toMatchRecord } from '@syncline/identity';
import { syntheticPeople } from './identity-generator';
import { emit, log } from './support';

/**
 * Batch resolution of synthetic people (15 % planted duplicates) through the same Resolver
 * the incremental path uses, in memory (no Postgres writes), scored pairwise against the
 * planted truth. Time and peak RSS include generating the records.
 */
export async function run(args: { records?: number; seed?: number } = {}): Promise<void> {
  const total = args.records ?? 1_000_000;
  const settings = { ...DEFAULT_SETTINGS, defaultCountry: 'US' as const };
  const resolver = new Resolver(new MatchIndex(), settings);
  const predicted = new Int32Array(total);
  const truth = new Int32Array(total);
  const decisions: Record<string, number> = {};
  let next = 0;
  const newId = () => `e${next++}`;
  log(`identity-batch: ${total} records`);
  const started = process.hrtime.bigint();
  let i = 0;
  for (const person of syntheticPeople(total, args.seed ?? 42)) {
    const resolution = resolver.resolveAndCommit(toMatchRecord('person', person.fields, settings), newId);
    predicted[i] = resolver.index.handle(resolution.entityId);
    truth[i] = person.truth;
    decisions[resolution.decision] = (decisions[resolution.decision] ?? 0) + 1;
    i++;
    if (i % 200_000 === 0)
      log(`  ${i} records, ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  // Clusters as they stand at the end (no merges happen in a batch, but follow them anyway).
  for (let k = 0; k < i; k++) predicted[k] = resolver.index.survivor(predicted[k]!);
  const { precision, recall } = pairwise(predicted.subarray(0, i), truth.subarray(0, i));
  log(`  decisions ${JSON.stringify(decisions)}`);
  emit({
    bench: 'identity-batch',
    records: i,
    seconds: round(seconds, 2),
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    precision: round(precision, 4),
    recall: round(recall, 4),
    possible_duplicates: decisions['created-with-possible-duplicate'] ?? 0,
  });
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
const pairs = (n: number) => (n * (n - 1)) / 2;

/** Pairwise precision and recall: pairs of records put together, against pairs that belong together. */
export function pairwise(predicted: Int32Array, truth: Int32Array): { precision: number; recall: number } {
  const cells = new Map<number, number>();
  const byPredicted = new Map<number, number>();
  const byTruth = new Map<number, number>();
  for (let k = 0; k < predicted.length; k++) {
    const p = predicted[k]!;
    const t = truth[k]!;
    // Both ids are below 2^31, so one float key holds the pair exactly.
    const cell = p * 2 ** 31 + t;
    cells.set(cell, (cells.get(cell) ?? 0) + 1);
    byPredicted.set(p, (byPredicted.get(p) ?? 0) + 1);
    byTruth.set(t, (byTruth.get(t) ?? 0) + 1);
  }
  let together = 0;
  for (const n of cells.values()) together += pairs(n);
  let predictedPairs = 0;
  for (const n of byPredicted.values()) predictedPairs += pairs(n);
  let truePairs = 0;
  for (const n of byTruth.values()) truePairs += pairs(n);
  return {
    precision: predictedPairs === 0 ? 1 : together / predictedPairs,
    recall: truePairs === 0 ? 1 : together / truePairs,
  };
}
