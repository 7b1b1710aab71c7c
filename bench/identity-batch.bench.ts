import { DEFAULT_SETTINGS, MatchIndex, Resolver, toMatchRecord } from '@syncline/identity';
import {
  ADVERSARIAL_KINDS,
  type AdversarialRecord,
  adversarialPeople,
  rng,
  syntheticPeople,
} from './identity-generator';
import { emit, log } from './support';

const SETTINGS = { ...DEFAULT_SETTINGS, defaultCountry: 'US' as const };

/**
 * Batch resolution of synthetic people (15 % planted duplicates) through the same Resolver
 * the incremental path uses, in memory (no Postgres writes), scored pairwise against the
 * planted truth. Time and peak RSS are of that pass alone and include generating the records.
 *
 * Then, each in a resolver of its own: the adversarial set (near-duplicates that are different
 * people, and true duplicates written differently, over two CRMs and a mailbox: see
 * `adversarialPeople`), scored the same way, overall (pairs of both sets together) and by kind;
 * and both sets again in shuffled arrival orders (`orders` in all, the first as generated; the
 * main set's first `orderRecords` records), to say whether the partition depends on the order.
 */
export async function run(
  args: {
    records?: number;
    seed?: number;
    adversarial?: number;
    orders?: number;
    orderRecords?: number;
  } = {},
): Promise<void> {
  const total = args.records ?? 1_000_000;
  const seed = args.seed ?? 42;
  const orders = Math.max(1, args.orders ?? 4);
  const main = mainPass(total, seed);
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);

  const adversarial = adversarialPeople(args.adversarial ?? 2400, seed);
  const people = new Set(adversarial.map((r) => r.truth)).size;
  log(`identity-batch: adversarial set, ${adversarial.length} records of ${people} people, ${orders} orders`);
  const truth = Int32Array.from(adversarial, (r) => r.truth);
  const adv = adversarialPass(adversarial, truth, orders, seed);
  const advCounts = adv.counts;

  const orderRecords = Math.min(total, args.orderRecords ?? 100_000);
  log(`identity-batch: main set's first ${orderRecords} records in ${orders} orders`);
  const firstRecords: OrderedRecord[] = [];
  for (const person of syntheticPeople(total, seed)) {
    if (firstRecords.length >= orderRecords) break;
    firstRecords.push({ fields: person.fields });
  }
  let mainIndependent = true;
  let reference: Int32Array | undefined;
  for (let k = 0; k < orders; k++) {
    const labels = canonical(resolveAll(firstRecords, permutation(firstRecords.length, seed, k)).predicted);
    if (!reference) reference = labels;
    else if (!equal(reference, labels)) mainIndependent = false;
  }

  const overall = ratios({
    together: main.counts.together + advCounts.together,
    predicted: main.counts.predicted + advCounts.predicted,
    truth: main.counts.truth + advCounts.truth,
  });
  const mainRatios = ratios(main.counts);
  emit({
    bench: 'identity-batch',
    records: main.records,
    seconds: round(main.seconds, 2),
    peak_rss_mb: peakRssMb,
    precision: round(mainRatios.precision, 4),
    recall: round(mainRatios.recall, 4),
    recall_with_review: round(main.review.recall, 4),
    review_pairs: main.review.pairs,
    review_precision: round(main.review.precision, 4),
    possible_duplicates: main.decisions['created-with-possible-duplicate'] ?? 0,
    orders,
    order_records: orderRecords,
    orderIndependent: mainIndependent,
    adversarial: {
      records: adversarial.length,
      people,
      true_pairs: advCounts.truth,
      predicted_pairs: advCounts.predicted,
      false_pairs: advCounts.predicted - advCounts.together,
      missed_pairs: advCounts.truth - advCounts.together,
      precision: round(ratios(advCounts).precision, 4),
      recall: round(ratios(advCounts).recall, 4),
      recall_with_review: round(adv.review.recall, 4),
      review_pairs: adv.review.pairs,
      review_precision: round(adv.review.precision, 4),
      possible_duplicates: adv.decisions['created-with-possible-duplicate'] ?? 0,
      by_kind: adv.byKind,
      precision_min: round(adv.precisionMin, 4),
      recall_min: round(adv.recallMin, 4),
      orderIndependent: adv.independent,
    },
    overall: { precision: round(overall.precision, 4), recall: round(overall.recall, 4) },
  });
}

function mainPass(total: number, seed: number) {
  const resolver = new Resolver(new MatchIndex(), SETTINGS);
  const predicted = new Int32Array(total);
  const truth = new Int32Array(total);
  const decisions: Record<string, number> = {};
  let next = 0;
  const newId = () => `e${next++}`;
  log(`identity-batch: ${total} records`);
  const started = process.hrtime.bigint();
  let i = 0;
  const flagged: [number, number][] = [];
  for (const person of syntheticPeople(total, seed)) {
    const resolution = resolver.resolveAndCommit(toMatchRecord('person', person.fields, SETTINGS), newId);
    predicted[i] = resolver.index.handle(resolution.entityId);
    for (const c of resolution.possibleDuplicates)
      flagged.push([predicted[i]!, resolver.index.handle(c.entityId)]);
    truth[i] = person.truth;
    decisions[resolution.decision] = (decisions[resolution.decision] ?? 0) + 1;
    i++;
    if (i % 200_000 === 0)
      log(`  ${i} records, ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  // Clusters as they stand at the end (no merges happen in a batch, but follow them anyway).
  for (let k = 0; k < i; k++) predicted[k] = resolver.index.survivor(predicted[k]!);
  log(`  decisions ${JSON.stringify(decisions)}`);
  return {
    records: i,
    seconds,
    decisions,
    counts: pairCounts(predicted.subarray(0, i), truth.subarray(0, i)),
    review: reviewQueue(predicted.subarray(0, i), truth.subarray(0, i), flagged, resolver),
  };
}

function adversarialPass(records: AdversarialRecord[], truth: Int32Array, orders: number, seed: number) {
  let reference: Int32Array | undefined;
  let independent = true;
  let precisionMin = 1;
  let recallMin = 1;
  let first: ReturnType<typeof resolveAll> | undefined;
  for (let k = 0; k < orders; k++) {
    const result = resolveAll(records, permutation(records.length, seed, k));
    const { precision, recall } = ratios(pairCounts(result.predicted, truth));
    log(`  order ${k}: precision ${precision.toFixed(4)}, recall ${recall.toFixed(4)}`);
    precisionMin = Math.min(precisionMin, precision);
    recallMin = Math.min(recallMin, recall);
    const labels = canonical(result.predicted);
    if (!reference) reference = labels;
    else if (!equal(reference, labels)) independent = false;
    first ??= result;
  }
  const { predicted, decisions, flagged, resolver } = first!;
  const review = reviewQueue(predicted, truth, flagged, resolver);
  log(`  decisions (as generated) ${JSON.stringify(decisions)}`);
  const byKind: Record<string, { precision: number; recall: number; false_pairs: number }> = {};
  for (const kind of ADVERSARIAL_KINDS) {
    const at = records.flatMap((r, k) => (r.kind === kind ? [k] : []));
    const counts = pairCounts(
      Int32Array.from(at, (k) => predicted[k]!),
      Int32Array.from(at, (k) => truth[k]!),
    );
    const r = ratios(counts);
    byKind[kind] = {
      precision: round(r.precision, 4),
      recall: round(r.recall, 4),
      false_pairs: counts.predicted - counts.together,
    };
  }
  logFalseMerges(records, predicted, truth);
  return {
    counts: pairCounts(predicted, truth),
    decisions,
    byKind,
    precisionMin,
    recallMin,
    independent,
    review,
  };
}

/** A few entities holding more than one person, as generated, to stderr: what went wrong. */
function logFalseMerges(records: AdversarialRecord[], predicted: Int32Array, truth: Int32Array): void {
  const clusters = new Map<number, number[]>();
  for (let k = 0; k < records.length; k++) {
    const list = clusters.get(predicted[k]!);
    if (list) list.push(k);
    else clusters.set(predicted[k]!, [k]);
  }
  const mixed = [...clusters.values()].filter((ks) => new Set(ks.map((k) => truth[k])).size > 1);
  log(`  entities holding more than one person: ${mixed.length}`);
  for (const ks of mixed.slice(0, 6)) {
    const shown = ks.map((k) => {
      const { fields, connection, truth: who } = records[k]!;
      const name = [fields.firstName, fields.lastName].filter(Boolean).join(' ').trim() || '-';
      return `${connection}:${who}:${name}<${String(fields.email ?? fields.emails ?? fields.phone ?? '')}>`;
    });
    log(`    [${records[ks[0]!]!.kind}] ${shown.join(' | ')}`);
  }
}

interface OrderedRecord {
  fields: Record<string, unknown>;
  connection?: string;
}

/**
 * Resolves records in the order `order` gives (indexes into `records`), each a new source
 * record of its connection, and returns every record's entity (its survivor's handle) by its
 * index in `records`.
 */
function resolveAll(records: readonly OrderedRecord[], order: Int32Array) {
  const resolver = new Resolver(new MatchIndex(), SETTINGS);
  const handles = new Int32Array(records.length);
  const decisions: Record<string, number> = {};
  let next = 0;
  const newId = () => `e${next++}`;
  const flagged: [number, number][] = [];
  for (const k of order) {
    const { fields, connection } = records[k]!;
    const record = toMatchRecord('person', fields, SETTINGS);
    // As IdentityService does: a name never links two records of one connection.
    if (connection) record.source = connection;
    const resolution = resolver.resolveAndCommit(record, newId);
    handles[k] = resolver.index.handle(resolution.entityId);
    for (const c of resolution.possibleDuplicates)
      flagged.push([handles[k]!, resolver.index.handle(c.entityId)]);
    decisions[resolution.decision] = (decisions[resolution.decision] ?? 0) + 1;
  }
  for (let k = 0; k < records.length; k++) handles[k] = resolver.index.survivor(handles[k]!);
  return { predicted: handles, decisions, flagged, resolver };
}

/** Order `k`: 0 as generated, otherwise a seeded shuffle. */
function permutation(n: number, seed: number, k: number): Int32Array {
  const order = Int32Array.from({ length: n }, (_, i) => i);
  if (k === 0) return order;
  const rand = rng(seed * 1_000 + k);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** Entity labels made comparable across runs: each record's label is the first record of its entity. */
function canonical(predicted: Int32Array): Int32Array {
  const first = new Map<number, number>();
  const labels = new Int32Array(predicted.length);
  for (let k = 0; k < predicted.length; k++) {
    const p = predicted[k]!;
    let label = first.get(p);
    if (label === undefined) {
      label = k;
      first.set(p, k);
    }
    labels[k] = label;
  }
  return labels;
}

const equal = (a: Int32Array, b: Int32Array) => a.length === b.length && a.every((x, k) => x === b[k]);

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
const pairs = (n: number) => (n * (n - 1)) / 2;

interface PairCounts {
  /** Pairs of records put in one entity that are one person. */
  together: number;
  /** Pairs of records put in one entity. */
  predicted: number;
  /** Pairs of records that are one person. */
  truth: number;
}

const ratios = ({ together, predicted, truth }: PairCounts) => ({
  precision: predicted === 0 ? 1 : together / predicted,
  recall: truth === 0 ? 1 : together / truth,
});

/** Pairwise precision and recall: pairs of records put together, against pairs that belong together. */
export function pairwise(predicted: Int32Array, truth: Int32Array): { precision: number; recall: number } {
  return ratios(pairCounts(predicted, truth));
}

function pairCounts(predicted: Int32Array, truth: Int32Array): PairCounts {
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
  return { together, predicted: predictedPairs, truth: truePairs };
}

/**
 * The review queue against the truth. `recall`: of the pairs of records that are one person,
 * those in one entity or in two entities a possible duplicate names (what a person then merges
 * from the queue: the recall the product reaches, where the plain recall is what it reaches
 * alone). `precision`: of the queue's pairs, those whose entities hold one person.
 */
function reviewQueue(
  predicted: Int32Array,
  truth: Int32Array,
  flagged: readonly [number, number][],
  resolver: Resolver,
): { recall: number; precision: number; pairs: number } {
  const pairKey = (a: number, b: number) => (a < b ? a * 2 ** 31 + b : b * 2 ** 31 + a);
  const review = new Set<number>();
  for (const [a, b] of flagged) {
    const [x, y] = [resolver.index.survivor(a), resolver.index.survivor(b)];
    if (x !== y) review.add(pairKey(x, y));
  }
  const byTruth = new Map<number, number[]>();
  const peopleOf = new Map<number, Set<number>>();
  for (let k = 0; k < truth.length; k++) {
    const list = byTruth.get(truth[k]!);
    if (list) list.push(predicted[k]!);
    else byTruth.set(truth[k]!, [predicted[k]!]);
    const people = peopleOf.get(predicted[k]!);
    if (people) people.add(truth[k]!);
    else peopleOf.set(predicted[k]!, new Set([truth[k]!]));
  }
  let found = 0;
  let all = 0;
  for (const entities of byTruth.values())
    for (let i = 0; i < entities.length; i++)
      for (let j = i + 1; j < entities.length; j++) {
        all++;
        const [a, b] = [entities[i]!, entities[j]!];
        if (a === b || review.has(pairKey(a, b))) found++;
      }
  let right = 0;
  for (const key of review) {
    const [a, b] = [Math.floor(key / 2 ** 31), key % 2 ** 31];
    const x = peopleOf.get(a);
    const y = peopleOf.get(b);
    if (x && y && [...x].some((p) => y.has(p))) right++;
  }
  return {
    recall: all === 0 ? 1 : found / all,
    precision: review.size === 0 ? 1 : right / review.size,
    pairs: review.size,
  };
}
