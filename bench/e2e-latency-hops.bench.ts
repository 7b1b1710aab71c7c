import { history, LATENCY_PORTALS, measure } from './e2e-latency.bench';
import { type Stack, startStack } from './e2e-stack';
import { emit, log, percentile } from './support';

/**
 * e2e-latency-hops: the e2e-latency run, then where each edit's time went, from timestamps the
 * system keeps anyway (nothing is added to the hot path):
 *
 * | mark | read from |
 * |---|---|
 * | webhook sent, answered | the emulator's delivery log (`sentAt`, `at`), by HubSpot event id |
 * | appended | `change_event.ingested_at` (the append transaction's start) |
 * | batch start | `consumer_batch.committed_at` of the sync batch that took the event (its transaction's start, = `outbox.created_at`) |
 * | next batch start | the group's next batch: an upper bound of this batch's commit and after-commit work |
 * | claimed | `outbox.claimed_at` of the row that carried the value to B |
 * | write started | `write_receipt.sent_at` (just before the provider call) |
 * | arrived | B's property history |
 * | recorded | `outbox.sent_at` |
 *
 * All on one machine's clock, to the millisecond. Prints the e2e-latency line, then one line
 * with p50 / p99 of each hop.
 */
export async function run(args: Record<string, number>): Promise<void> {
  const rate = args.rate ?? 200;
  const seconds = args.seconds ?? 10;
  const stack = await startStack();
  try {
    emit(await measure(stack, rate, seconds));
    emit({ bench: 'e2e-latency-hops', rate, ...(await hops(stack)) });
  } finally {
    await stack.stop();
  }
}

interface EditRow {
  value: string;
  event_id: string;
  ingested: number;
  batch_start: number | null;
  next_batch_start: number | null;
  batch_events: number | null;
  claimed: number | null;
  write_started: number | null;
  recorded: number | null;
}

async function hops(stack: Stack) {
  const { emu, pool } = stack;
  const { A, B } = LATENCY_PORTALS;
  // Each value e<k> was written once in A (a webhook event) and once to B (an outbox row).
  const { rows } = await pool.query<EditRow>(
    `WITH edit AS (
       SELECT DISTINCT ON (e.fields->>'jobTitle') e.fields->>'jobTitle' AS value, e.origin->>'eventId' AS event_id,
              e.partition, e."offset", e.ingested_at
         FROM change_event e JOIN connection c ON c.id = e.connection_id AND c.external_account_id = $1
        WHERE e.fields->>'jobTitle' LIKE 'e%' AND e.origin->>'eventId' IS NOT NULL
        ORDER BY e.fields->>'jobTitle', e.ingested_at),
     batch AS (
       SELECT seq, committed_at, lead(committed_at) OVER (ORDER BY seq) AS next_at
         FROM (SELECT seq, min(committed_at) AS committed_at FROM consumer_batch WHERE group_name = 'sync' GROUP BY seq) s),
     sized AS (
       SELECT b.seq, sum(b.last_offset - b.since_offset)::int AS events
         FROM consumer_batch b WHERE b.group_name = 'sync' GROUP BY b.seq),
     sent AS (
       SELECT DISTINCT ON (o.fields->>'jobTitle') o.fields->>'jobTitle' AS value, o.claimed_at, o.sent_at,
              w.sent_at AS write_started
         FROM outbox o JOIN connection c ON c.id = o.connection_id AND c.external_account_id = $2
         LEFT JOIN write_receipt w ON w.connection_id = o.connection_id AND w.idempotency_key = o.idempotency_key
        WHERE o.status = 'sent' AND o.fields->>'jobTitle' LIKE 'e%'
        ORDER BY o.fields->>'jobTitle', o.sent_at)
     SELECT edit.value, edit.event_id,
            extract(epoch FROM edit.ingested_at) * 1000 AS ingested,
            extract(epoch FROM batch.committed_at) * 1000 AS batch_start,
            extract(epoch FROM batch.next_at) * 1000 AS next_batch_start,
            sized.events AS batch_events,
            extract(epoch FROM sent.claimed_at) * 1000 AS claimed,
            extract(epoch FROM sent.write_started) * 1000 AS write_started,
            extract(epoch FROM sent.sent_at) * 1000 AS recorded
       FROM edit
       LEFT JOIN LATERAL (
         SELECT seq FROM consumer_batch b
          WHERE b.group_name = 'sync' AND b.partition = edit.partition
            AND b.since_offset < edit."offset" AND b.last_offset >= edit."offset"
          LIMIT 1) taken ON true
       LEFT JOIN batch ON batch.seq = taken.seq
       LEFT JOIN sized ON sized.seq = taken.seq
       LEFT JOIN sent ON sent.value = edit.value`,
    [String(A), String(B)],
  );

  // Webhook sent and answered, by the HubSpot event id each delivery carried (first attempt).
  const delivery = new Map<string, { sent: number; answered: number }>();
  for (const d of (await emu.hubspot.webhooks(A)).deliveries) {
    if (d.attemptNumber !== 0 || d.duplicate || d.sentAt === undefined) continue;
    for (const id of d.eventIds)
      delivery.set(String(id), { sent: Date.parse(d.sentAt), answered: Date.parse(d.at) });
  }
  // Arrival of each value in B: B's property history (a fresh grant: the history is read through the data plane).
  const { accessToken } = await emu.hubspot.issueTokens(B);
  const arrived = new Map<string, number>();
  for (const contact of await emu.hubspot.objects(B, 'contacts'))
    for (const h of await history(stack, accessToken, contact.id))
      if (!arrived.has(h.value)) arrived.set(h.value, Date.parse(h.timestamp));

  const spans: Record<string, number[]> = {
    webhook_answered: [],
    webhook_to_append: [],
    append_to_batch_start: [],
    batch_start_to_next_batch: [],
    batch_start_to_claim: [],
    claim_to_write: [],
    write_to_arrival: [],
    arrival_to_recorded: [],
    total: [],
  };
  const batchSizes: number[] = [];
  let complete = 0;
  const add = (hop: string, from: number | null | undefined, to: number | null | undefined) => {
    if (from != null && to != null) spans[hop]!.push(Number(to) - Number(from));
  };
  for (const r of rows) {
    const hook = delivery.get(r.event_id);
    const there = arrived.get(r.value);
    add('webhook_answered', hook?.sent, hook?.answered);
    add('webhook_to_append', hook?.sent, r.ingested);
    add('append_to_batch_start', r.ingested, r.batch_start);
    add('batch_start_to_next_batch', r.batch_start, r.next_batch_start);
    add('batch_start_to_claim', r.batch_start, r.claimed);
    add('claim_to_write', r.claimed, r.write_started);
    add('write_to_arrival', r.write_started, there);
    add('arrival_to_recorded', there, r.recorded);
    add('total', hook?.sent, there);
    if (r.batch_events != null) batchSizes.push(r.batch_events);
    if (hook && there !== undefined && r.batch_start != null && r.claimed != null && r.write_started != null)
      complete++;
  }
  const summary = (list: number[]) => {
    const sorted = [...list].sort((x, y) => x - y);
    return sorted.length === 0
      ? null
      : { p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)) };
  };
  log(`hops: ${rows.length} edits on the log, ${complete} with every mark`);
  return {
    edits: rows.length,
    complete,
    hops_ms: Object.fromEntries(Object.entries(spans).map(([hop, list]) => [hop, summary(list)])),
    // Events in the sync batch that took each edit (so batches are weighted by the edits they held).
    batch_events: summary(batchSizes),
  };
}
