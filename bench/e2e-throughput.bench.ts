import { contactEditor } from './contact-editor';
import { cpuBetween } from './cpu-accounting';
import { pooled, type Stack, startStack, waitUntil } from './e2e-stack';
import { emit, log } from './support';

/**
 * e2e-throughput: source changes per second from HubSpot's webhooks (edits in CRM A) to the
 * writes in CRM B, over `changes` edits of `contacts` people, with the emulator's limits off.
 * By default (`--held=1`) A's webhooks are held while the edits are made and released at
 * once: the time runs from the release to the last value arriving in B, so it measures the
 * sync from webhook to writeback, not how fast this machine can make edits in the emulator
 * while syncing them. With `--held=0` the edits are made live and the time runs from the
 * first edit; the offered rate (how fast the edits were made) is printed beside it.
 * 30,000 edits by default: a window of about ten seconds, so the connections' scheduled pulls
 * (each re-reads every record the edits touched) fall into it in proportion; over the
 * 3–7 s of 10,000 edits one more or one fewer pull moved the result between about 1,500 and
 * 3,600 changes/s for the same code.
 */
export async function run(args: Record<string, number>): Promise<void> {
  const contacts = args.contacts ?? 1_000;
  const changes = args.changes ?? 30_000;
  const concurrency = args.concurrency ?? 32;
  const held = (args.held ?? 1) === 1;
  const workers = args.workers ?? 1;
  const stack = await startStack({ workers });
  try {
    emit({ ...(await measure(stack, contacts, changes, concurrency, held, args.diagnose === 1)), workers });
  } finally {
    await stack.stop();
  }
}

async function measure(
  stack: Stack,
  contacts: number,
  changes: number,
  concurrency: number,
  held: boolean,
  diagnose = false,
) {
  const { emu } = stack;
  const [A, B] = [9101, 9102];
  const a = await stack.portal(A);
  const b = await stack.portal(B);
  await pooled(contacts, 16, (i) =>
    emu.hubspot
      .createContact(A, { email: `p${i}@bench.example`, firstname: `P${i}`, lastname: 'Bench' })
      .then(() => {}),
  );
  await stack.connect(A, a);
  await stack.connect(B, b);
  const backfilled = await waitUntil(
    async () => (await emu.hubspot.objects(B, 'contacts')).length >= contacts,
    300_000,
    500,
  );
  if (backfilled === undefined) throw new Error('CRM B never received every contact');
  const ids = (await emu.hubspot.objects(A, 'contacts')).map((c) => c.id);
  log(`backfill and first copy done: ${contacts} contacts in both CRMs`);

  const last = new Map<string, string>();
  // Held: nothing of the edits reaches the sync before the release, the scheduled pulls
  // included (A answers them 429 while the edits are made). Without that, the values the pulls
  // synced during the edits made the webhooks that carried them no-ops after the release, so
  // the result depended on how fast this machine made the edits: measured with two drivers,
  // 2,800 against 600 of A's records pulled and synced before the release, and 1,938 against
  // 1,575 changes/s for the same code.
  if (held) {
    await emu.hubspot.updatePortal(A, { webhookTiming: { held: true } });
    await emu.fault({ service: 'hubspot', kind: 'rate-limit', account: A });
  }
  const editor = contactEditor(emu.urls.hubspot);
  const editsStarted = Date.now();
  await pooled(changes, concurrency, async (k) => {
    const id = ids[k % ids.length]!;
    const value = `t${k}`;
    await editor.update(A, id, { jobtitle: value });
    last.set(id, value);
  });
  const offeredMs = Date.now() - editsStarted;
  log(`${changes} edits made in ${offeredMs} ms${held ? ', webhooks held' : ''}`);
  // Values are compared by email: B's copies have other ids.
  const emailOf = new Map((await emu.hubspot.objects(A, 'contacts')).map((c) => [c.id, c.properties.email]));
  const want = new Map<string, string>();
  for (const [id, value] of last) want.set(emailOf.get(id) ?? '', value);
  const lostIn = async () => {
    const got = new Map(
      (await emu.hubspot.objects(B, 'contacts')).map((c) => [c.properties.email, c.properties.jobtitle]),
    );
    let lost = 0;
    for (const [email, value] of want) if (got.get(email) !== value) lost++;
    return lost;
  };
  const started = held ? Date.now() : editsStarted;
  const cpuBefore = held ? stack.cpu() : undefined;
  if (held) {
    await emu.clearFaults();
    await emu.hubspot.updatePortal(A, { webhookTiming: { held: false } });
  }
  const done = await waitUntil(async () => (await lostIn()) === 0, 120_000, 250);
  const elapsed = (done ?? Date.now()) - started;
  // Where the cores went while the webhooks were synced (from-webhooks only: otherwise the
  // window holds the bench's own edits too).
  const cpu = cpuBefore ? cpuBetween(cpuBefore, stack.cpu()) : undefined;
  const inB = await emu.hubspot.objects(B, 'contacts');
  // --diagnose=1: what the sync made, on stderr (the log's events by kind, the outbox by target and status).
  if (diagnose) {
    const { rows: events } = await stack.pool.query(
      `SELECT c.external_account_id AS portal, e.op, count(*)::int AS n FROM change_event e
         JOIN connection c ON c.id = e.connection_id GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    const { rows: outbox } = await stack.pool.query(
      `SELECT c.external_account_id AS portal, o.op, o.status, count(*)::int AS n FROM outbox o
         JOIN connection c ON c.id = o.connection_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
    const { rows: setAside } = await stack.pool.query(
      `SELECT left(COALESCE(last_error, '(none)'), 60) AS reason, count(*)::int AS n FROM outbox
        WHERE status = 'superseded' GROUP BY 1 ORDER BY 2 DESC LIMIT 5`,
    );
    // When the log took each portal's events after the release, in ms from it.
    const { rows: timeline } = await stack.pool.query(
      `SELECT c.external_account_id AS portal, e.op,
              round(extract(epoch FROM min(e.ingested_at)) * 1000 - $1)::int AS first_ms,
              round(extract(epoch FROM max(e.ingested_at)) * 1000 - $1)::int AS last_ms
         FROM change_event e JOIN connection c ON c.id = e.connection_id
        WHERE e.ingested_at >= to_timestamp($1 / 1000.0) GROUP BY 1, 2 ORDER BY 1, 2`,
      [started],
    );
    // Per second from the release: events the log took, and events the sync stage folded.
    const { rows: perSecond } = await stack.pool.query(
      `WITH appended AS (
         SELECT floor(extract(epoch FROM ingested_at) - $1 / 1000.0)::int AS s, count(*)::int AS n
           FROM change_event WHERE ingested_at >= to_timestamp($1 / 1000.0) GROUP BY 1),
       folded AS (
         SELECT floor(extract(epoch FROM committed_at) - $1 / 1000.0)::int AS s,
                sum(last_offset - since_offset)::int AS n, count(*)::int AS batches
           FROM consumer_batch WHERE group_name = 'sync' AND committed_at >= to_timestamp($1 / 1000.0) GROUP BY 1)
       SELECT s, COALESCE(a.n, 0) AS appended, COALESCE(f.n, 0) AS folded, COALESCE(f.batches, 0) AS batches
         FROM appended a FULL JOIN folded f USING (s) ORDER BY s`,
      [started],
    );
    log(
      `per second (s, appended, folded, batches): ${perSecond.map((r) => `${r.s}:${r.appended}/${r.folded}/${r.batches}`).join(' ')}`,
    );
    log(`events: ${JSON.stringify(events)}`);
    log(`after the release: ${JSON.stringify(timeline)}`);
    log(`set aside: ${JSON.stringify(setAside)}`);
    log(`outbox: ${JSON.stringify(outbox)}`);
  }
  return {
    bench: 'e2e-throughput',
    mode: held ? 'from-webhooks' : 'live-edits',
    changes,
    changes_per_s: Math.round((changes / elapsed) * 1000),
    offered_per_s: Math.round((changes / offeredMs) * 1000),
    lost: done === undefined ? await lostIn() : 0,
    duplicates: inB.length - contacts,
    seconds: Number((elapsed / 1000).toFixed(1)),
    ...(cpu ? { cpu_s: cpu, cpu_ms_per_change: Number(((cpu.total! * 1000) / changes).toFixed(2)) } : {}),
  };
}
