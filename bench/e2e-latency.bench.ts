import { contactEditor } from './contact-editor';
import { type Stack, startStack, waitUntil } from './e2e-stack';
import { emit, log } from './support';

interface HistoryEntry {
  value: string;
  timestamp: string;
}

/**
 * e2e-latency: at `rate` edits/s in CRM A (HubSpot), the time from the webhook carrying each
 * edit leaving the emulator to its write arriving in CRM B, with the default coalescing
 * window. Arrival is read from B's property history; departure is the send time of the first
 * webhook POST after the edit (the emulator sends every event queued at a flush, after its
 * batching delay, in that flush). The time from the edit itself (A's property history), which
 * adds the emulator's batching delay (50 ms at most), is printed beside it. Each person is
 * edited once a second, so no edit is coalesced away.
 */
export async function run(args: Record<string, number>): Promise<void> {
  const rate = args.rate ?? 200;
  const seconds = args.seconds ?? 10;
  const stack = await startStack();
  try {
    emit(await measure(stack, rate, seconds));
  } finally {
    await stack.stop();
  }
}

export async function history(stack: Stack, token: string, id: string): Promise<HistoryEntry[]> {
  const res = await fetch(
    `${stack.emu.urls.hubspot}/crm/v3/objects/contacts/${id}?propertiesWithHistory=jobtitle`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  const body = (await res.json()) as { propertiesWithHistory?: { jobtitle?: HistoryEntry[] } };
  return body.propertiesWithHistory?.jobtitle ?? [];
}

/** The portals edited (A) and written to (B). */
export const LATENCY_PORTALS = { A: 9201, B: 9202 } as const;

export async function measure(stack: Stack, rate: number, seconds: number) {
  const { emu } = stack;
  const { A, B } = LATENCY_PORTALS;
  const a = await stack.portal(A);
  const b = await stack.portal(B);
  const people = rate; // one edit per person per second
  for (let i = 0; i < people; i++)
    await emu.hubspot.createContact(A, {
      email: `l${i}@bench.example`,
      firstname: `L${i}`,
      lastname: 'Bench',
    });
  await stack.connect(A, a);
  await stack.connect(B, b);
  if (
    (await waitUntil(
      async () => (await emu.hubspot.objects(B, 'contacts')).length >= people,
      300_000,
      500,
    )) === undefined
  )
    throw new Error('CRM B never received every contact');
  await new Promise((r) => setTimeout(r, 2_000));
  const inA = await emu.hubspot.objects(A, 'contacts');
  log(`${people} people in both CRMs; editing at ${rate}/s for ${seconds} s`);

  const total = rate * seconds;
  const editor = contactEditor(emu.urls.hubspot);
  const started = Date.now();
  const inflight: Promise<unknown>[] = [];
  for (let k = 0; k < total; k++) {
    const due = started + (k * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(editor.update(A, inA[k % people]!.id, { jobtitle: `e${k}` }));
  }
  await Promise.all(inflight);
  const achieved = (total / (Date.now() - started)) * 1000;
  const bByEmail = async () =>
    new Map((await emu.hubspot.objects(B, 'contacts')).map((c) => [c.properties.email, c]));
  await waitUntil(
    async () => {
      const inB = await bByEmail();
      return inA.every(
        (c) => inB.get(c.properties.email)?.properties.jobtitle === `e${total - people + inA.indexOf(c)}`,
      );
    },
    120_000,
    500,
  );

  const inB = await bByEmail();
  const pairs: { edited: number; arrived: number }[] = [];
  let missing = 0;
  for (const c of inA) {
    const sent = new Map(
      (await history(stack, a.accessToken, c.id)).map((h) => [h.value, Date.parse(h.timestamp)]),
    );
    const copy = inB.get(c.properties.email);
    const arrived = copy ? await history(stack, b.accessToken, copy.id) : [];
    const at = new Map(arrived.map((h) => [h.value, Date.parse(h.timestamp)]));
    for (const [value, t] of sent) {
      if (!value.startsWith('e')) continue;
      const there = at.get(value);
      if (there === undefined) missing++;
      else pairs.push({ edited: t, arrived: there });
    }
  }
  // Departures: first attempts of A's webhook POSTs, in order of sending.
  const departures = (await emu.hubspot.webhooks(A)).deliveries
    .filter((d) => d.attemptNumber === 0 && !d.duplicate && d.sentAt !== undefined)
    .map((d) => Date.parse(d.sentAt!))
    .sort((x, y) => x - y);
  const departureAfter = (t: number): number | undefined => {
    let lo = 0;
    let hi = departures.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (departures[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return departures[lo];
  };
  const fromWebhook: number[] = [];
  for (const { edited, arrived } of pairs) {
    const left = departureAfter(edited);
    if (left !== undefined && left <= arrived) fromWebhook.push(arrived - left);
  }
  const pct = (list: number[], p: number) => {
    const sorted = [...list].sort((x, y) => x - y);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
  };
  const fromEdit = pairs.map((p) => p.arrived - p.edited);
  // Where the tail is: the slowest edit of each second of the run (stderr).
  const first = Math.min(...pairs.map((p) => p.edited));
  const slowest = new Map<number, number>();
  for (const p of pairs) {
    const second = Math.floor((p.edited - first) / 1000);
    slowest.set(second, Math.max(slowest.get(second) ?? 0, p.arrived - p.edited));
  }
  log(
    `slowest per second: ${[...slowest]
      .sort(([a], [b]) => a - b)
      .map(([, ms]) => ms)
      .join(' ')}`,
  );
  return {
    bench: 'e2e-latency',
    rate,
    achieved_rate: Math.round(achieved),
    p50_ms: pct(fromWebhook, 50),
    p99_ms: pct(fromWebhook, 99),
    max_ms: Math.max(...fromWebhook),
    from_edit_p50_ms: pct(fromEdit, 50),
    from_edit_p99_ms: pct(fromEdit, 99),
    webhook_posts: departures.length,
    measured: fromWebhook.length,
    coalesced_or_missing: missing,
  };
}
