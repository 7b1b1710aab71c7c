import { DEFAULT_SETTINGS, MatchIndex, Resolver, toMatchRecord } from '@syncline/identity';
import { syntheticPeople } from './identity-generator';
import { emit, log } from './support';

/**
 * Incremental match latency against an index of `records` people: the index is built with
 * the batch path, then `samples` further records (new people and planted duplicates from
 * the same generator) are each normalised, resolved and committed, timed one by one. This
 * is the in-memory decision; the Postgres reads and writes around it in a log consumer
 * are not included.
 */
export async function run(args: { records?: number; samples?: number; seed?: number } = {}): Promise<void> {
  const total = args.records ?? 1_000_000;
  const samples = args.samples ?? 20_000;
  const settings = { ...DEFAULT_SETTINGS, defaultCountry: 'US' as const };
  const resolver = new Resolver(new MatchIndex(), settings);
  let next = 0;
  const newId = () => `e${next++}`;
  log(`identity-incremental: index of ${total} people, ${samples} timed matches`);
  const timings = new Float64Array(samples);
  let i = 0;
  for (const person of syntheticPeople(total + samples, args.seed ?? 7)) {
    if (i < total) {
      resolver.resolveAndCommit(toMatchRecord('person', person.fields, settings), newId);
    } else {
      const started = process.hrtime.bigint();
      resolver.resolveAndCommit(toMatchRecord('person', person.fields, settings), newId);
      timings[i - total] = Number(process.hrtime.bigint() - started) / 1e6;
    }
    i++;
  }
  timings.sort();
  const at = (q: number) =>
    Math.round(timings[Math.min(samples - 1, Math.floor(q * samples))]! * 1000) / 1000;
  emit({
    bench: 'identity-incremental',
    records: total,
    samples,
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    max_ms: at(1),
  });
}
