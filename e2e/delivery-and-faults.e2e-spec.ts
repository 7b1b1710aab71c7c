import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpSyncState } from './support/diagnostics';
import type { HubspotRecord, LoggedRequest } from './support/emulator-client';
import { E2E_HUBSPOT_APP, isWrite, type SyncSystem, sleep, startSystem, waitFor } from './support/system';

// Delivery guarantees and provider faults, through the real API and workers processes: two
// HubSpot portals (CRM A and CRM B) and one Google user's Gmail in one workspace.
//  4.  a HubSpot webhook batch delivered three times, in two orders, is applied once;
//  6b. a mail from a person both CRMs know is logged once in each CRM;
//  7.  429s and 500s at 5 % on every provider while edits flow: everything converges, nothing
//      twice; then, faults cleared, a burst of 50 edits meets no 429 at all.
// Assertions read the emulators' state and request logs; the database only explains failures.

const PORTAL_A = 3601;
const PORTAL_B = 3602;
const EMAIL = 'dora.delivery@syncline-e2e.example';
const BURST = 50;

/** People in both CRMs (linked by email). B alone knows their company, which tells us when they are linked. */
const PEOPLE = [
  { email: 'ann.archer@acme.example', firstname: 'Ann', lastname: 'Archer', company: 'Acme' },
  { email: 'bo.baker@acme.example', firstname: 'Bo', lastname: 'Baker', company: 'Acme' },
  { email: 'cy.cole@globex.example', firstname: 'Cy', lastname: 'Cole', company: 'Globex' },
  { email: 'di.dunn@globex.example', firstname: 'Di', lastname: 'Dunn', company: 'Globex' },
  { email: 'ed.ellis@initech.example', firstname: 'Ed', lastname: 'Ellis', company: 'Initech' },
  { email: 'fay.ford@initech.example', firstname: 'Fay', lastname: 'Ford', company: 'Initech' },
  { email: 'gus.gray@umbrella.example', firstname: 'Gus', lastname: 'Gray', company: 'Umbrella' },
  { email: 'hal.hart@umbrella.example', firstname: 'Hal', lastname: 'Hart', company: 'Umbrella' },
];
const burstEmail = (n: number) => `burst${n}@fleet.example`;

const pathOf = (r: LoggedRequest) => r.path.split('?')[0] ?? '';

/**
 * Stands between portal A's webhooks and our API, like a load balancer: each POST is passed on
 * unchanged (the v3 signature made again for the API's URL, since it signs the URL), and the
 * API's answer returned. `loseAckOf(ids)` makes the answer to the next POST carrying any of
 * those object ids a 503 after the API has taken it: the acknowledgement is lost, so HubSpot
 * delivers the batch again.
 */
async function startWebhookRelay(target: string, clientSecret: string) {
  const seen: { at: number; objectIds: number[]; eventIds: number[]; apiStatus: number; answered: number }[] =
    [];
  let loseAckFor: Set<number> | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(req.headers['x-hubspot-request-timestamp'] ?? '');
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-hubspot-signature': String(req.headers['x-hubspot-signature'] ?? ''),
        'x-hubspot-signature-version': String(req.headers['x-hubspot-signature-version'] ?? ''),
        'x-hubspot-signature-v3': createHmac('sha256', clientSecret)
          .update(`POST${target}${body}${timestamp}`, 'utf8')
          .digest('base64'),
        'x-hubspot-request-timestamp': timestamp,
      };
      let events: { eventId?: number; objectId?: number }[] = [];
      try {
        events = JSON.parse(body);
      } catch {
        // passed on as it is
      }
      let apiStatus = 0;
      let answer = '';
      try {
        const forwarded = await fetch(target, { method: 'POST', headers, body });
        apiStatus = forwarded.status;
        answer = await forwarded.text();
      } catch (error) {
        answer = String(error);
      }
      const objectIds = events.map((e) => e.objectId ?? 0);
      let answered = apiStatus || 502;
      if (loseAckFor && objectIds.some((id) => loseAckFor!.has(id))) {
        loseAckFor = undefined;
        answered = 503;
      }
      seen.push({
        at: Date.now(),
        objectIds,
        eventIds: events.map((e) => e.eventId ?? 0),
        apiStatus,
        answered,
      });
      res.writeHead(answered, { 'content-type': 'application/json' });
      res.end(answered === apiStatus ? answer : '{"error":"acknowledgement lost"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/hubspot`,
    seen,
    loseAckOf: (objectIds: string[]) => {
      loseAckFor = new Set(objectIds.map(Number));
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('delivery guarantees and provider faults', () => {
  let s: SyncSystem;
  let relay: Awaited<ReturnType<typeof startWebhookRelay>>;
  let readerTokenB = '';
  const started = Date.now();
  const timings: Record<string, number> = {};

  const contacts = (portal: number) => s.emulator.hubspot.objects(portal, 'contacts');
  const byEmail = async (portal: number) =>
    new Map((await contacts(portal)).map((c) => [c.properties.email?.toLowerCase() ?? '', c]));
  const emailsSubjected = async (portal: number, subject: string) =>
    (await s.emulator.hubspot.objects(portal, 'emails')).filter(
      (e) => e.properties.hs_email_subject === subject,
    );

  /** Waits until no data-plane write reaches either emulator for `quietMs`. */
  const settle = async (quietMs = 2_500, timeoutMs = 30_000) => {
    let last = '';
    let stableSince = Date.now();
    await waitFor(async () => JSON.stringify(await s.emulator.writeCounts()), {
      until: (now) => {
        if (now !== last) {
          last = now;
          stableSince = Date.now();
        }
        return Date.now() - stableSince >= quietMs;
      },
      timeoutMs,
      intervalMs: 250,
      describe: `writes to the emulators to stop for ${quietMs} ms`,
    });
  };

  /** A contact of B read through the data plane with the history of `properties` (a logged GET, not a write). */
  const historyInB = async (id: string, properties: string[]) => {
    const res = await fetch(
      `${s.urls.hubspot}/crm/v3/objects/contacts/${id}?propertiesWithHistory=${properties.join(',')}`,
      { headers: { authorization: `Bearer ${readerTokenB}` } },
    );
    if (!res.ok) throw new Error(`history of ${id} in B: ${res.status} ${await res.text()}`);
    const record = (await res.json()) as {
      propertiesWithHistory: Record<string, { value: string; timestamp: string; sourceType: string }[]>;
    };
    return record.propertiesWithHistory;
  };

  const dumpState = async () => {
    await dumpSyncState(s, 'delivery and faults');
    console.log(
      'relay saw',
      JSON.stringify(relay?.seen),
      'portal A webhooks',
      JSON.stringify(await s.emulator.hubspot.webhooks(PORTAL_A)),
      'A contacts',
      JSON.stringify((await contacts(PORTAL_A)).filter((c) => !c.properties.email?.startsWith('burst'))),
      'B contacts',
      JSON.stringify((await contacts(PORTAL_B)).filter((c) => !c.properties.email?.startsWith('burst'))),
      'A emails',
      JSON.stringify(await s.emulator.hubspot.objects(PORTAL_A, 'emails')),
      'B emails',
      JSON.stringify(await s.emulator.hubspot.objects(PORTAL_B, 'emails')),
    );
  };

  beforeAll(async () => {
    s = await startSystem({ label: 'delivery_faults', workers: 1, pullIntervalMs: 1_000 });
    relay = await startWebhookRelay(s.urls.hubspotWebhook, E2E_HUBSPOT_APP.clientSecret);
    const a = await s.emulator.hubspot.createPortal({ portalId: PORTAL_A, webhookUrl: relay.url });
    const b = await s.emulator.hubspot.createPortal({ portalId: PORTAL_B, webhooks: true });
    // Google answers its rate limits with 429 for this user (403 is the default).
    const google = await s.emulator.google.createUser(EMAIL, { rateLimitStatus: 429 });
    // The burst's people first, so that {n} numbers them alike in both portals.
    for (const portal of [PORTAL_A, PORTAL_B]) {
      await s.emulator.hubspot.seed(portal, 'contacts', {
        count: BURST,
        properties: { email: 'burst{n}@fleet.example', firstname: 'Burst', lastname: 'Person {n}' },
      });
    }
    for (const { company, ...person } of PEOPLE) {
      await s.emulator.hubspot.createContact(PORTAL_A, person);
      await s.emulator.hubspot.createContact(PORTAL_B, { ...person, company });
    }
    readerTokenB = (await s.emulator.hubspot.issueTokens(PORTAL_B)).accessToken;
    const hubspotCredentials = (grant: { accessToken: string; refreshToken: string }) => ({
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
    });
    await s.connect('hubspot', String(PORTAL_A), hubspotCredentials(a), { displayName: 'CRM A' });
    await s.connect('hubspot', String(PORTAL_B), hubspotCredentials(b), { displayName: 'CRM B' });
    await s.connect(
      'gmail',
      EMAIL,
      {
        accessToken: google.accessToken,
        refreshToken: google.refreshToken,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
      { displayName: 'Gmail' },
    );
    await waitFor(
      async () => {
        const inA = await byEmail(PORTAL_A);
        return PEOPLE.every((p) => inA.get(p.email)?.properties.company === p.company);
      },
      { timeoutMs: 60_000, describe: "every person in A to have B's company (linked)" },
    );
    await settle();
    timings.setup = Date.now() - started;
  }, 150_000);

  afterAll(async () => {
    console.log('delivery-and-faults timings (ms)', JSON.stringify(timings));
    await s?.stop();
    await relay?.close();
  });

  it('4. a webhook batch delivered three times, in two orders, is applied once: one write per target', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const t0 = Date.now();
    const targets = PEOPLE.slice(0, 4);
    const inA = await byEmail(PORTAL_A);
    const inB = await byEmail(PORTAL_B);
    const idsA = targets.map((p) => inA.get(p.email)!.id);
    const idsB = targets.map((p) => inB.get(p.email)!.id);
    const historyBefore = await Promise.all(idsB.map((id) => historyInB(id, ['jobtitle', 'phone'])));

    // The edits gather into one batch; the emulator sends it twice (another order), and the
    // relay loses our acknowledgement of the first copy it passes on, so HubSpot retries it.
    await s.emulator.hubspot.updatePortal(PORTAL_A, { webhookTiming: { batchDelayMs: 400 } });
    await s.emulator.fault({ service: 'hubspot', kind: 'duplicate-webhooks', account: PORTAL_A, count: 1 });
    relay.loseAckOf(idsA);
    const logA = (await s.emulator.requests({ service: 'hubspot', account: PORTAL_A })).length;
    const logB = (await s.emulator.requests({ service: 'hubspot', account: PORTAL_B })).length;
    const deliveriesBefore = (await s.emulator.hubspot.webhooks(PORTAL_A)).deliveries.length;
    const edits = targets.map((_, i) => ({ jobtitle: `Delivered once ${i}`, phone: `+1 555 010${i}` }));
    await Promise.all(idsA.map((id, i) => s.emulator.hubspot.updateContact(PORTAL_A, id, edits[i]!)));

    await waitFor(
      async () => {
        const b = await byEmail(PORTAL_B);
        return targets.map((p) => ({
          jobtitle: b.get(p.email)?.properties.jobtitle,
          phone: b.get(p.email)?.properties.phone,
        }));
      },
      {
        until: (v) => JSON.stringify(v) === JSON.stringify(edits),
        timeoutMs: 30_000,
        describe: 'B to show the four edits made in A',
      },
    );
    await settle();
    await s.emulator.hubspot.updatePortal(PORTAL_A, { webhookTiming: { batchDelayMs: 50 } });

    // The batch really went three times: lost ack (503, retried) + the duplicate, same events.
    const { deliveries, pending } = await s.emulator.hubspot.webhooks(PORTAL_A);
    expect(pending).toBe(0);
    const ours = deliveries.slice(deliveriesBefore);
    const batchIds = [...(ours[0]?.eventIds ?? [])].sort((x, y) => x - y);
    expect(batchIds).toHaveLength(8); // two properties of four contacts, one batch
    const copies = ours.filter(
      (d) => JSON.stringify([...d.eventIds].sort((x, y) => x - y)) === JSON.stringify(batchIds),
    );
    expect(copies).toHaveLength(3);
    // The copy whose acknowledgement was lost, its retry, and the other copy.
    expect(copies.map((d) => `${d.attemptNumber} ${d.outcome} ${d.status}`).sort()).toEqual([
      '0 delivered 200',
      '0 failed 503',
      '1 delivered 200',
    ]);
    expect(copies.some((d) => d.duplicate)).toBe(true);
    const orders = new Set(copies.map((d) => d.eventIds.join(',')));
    expect(orders.size).toBe(2); // the duplicate came in another order
    // Our API took every copy (the 503 was the relay's, after the API answered).
    const relayed = relay.seen.filter(
      (r) => r.at >= t0 && r.objectIds.some((id) => idsA.includes(String(id))),
    );
    expect(relayed.map((r) => r.apiStatus)).toEqual([200, 200, 200]);

    // Applied once: no write went back to A, and B got at most one write request per edited
    // contact (updates are batched, so a request may carry several), each a contact update.
    const writesA = (await s.emulator.requests({ service: 'hubspot', account: PORTAL_A }))
      .slice(logA)
      .filter(isWrite);
    expect(writesA).toEqual([]);
    const writesB = (await s.emulator.requests({ service: 'hubspot', account: PORTAL_B }))
      .slice(logB)
      .filter(isWrite);
    console.log(
      'scenario 4',
      JSON.stringify({ copies, writesB: writesB.map((w) => `${w.method} ${pathOf(w)} ${w.status}`) }),
    );
    expect(writesB.length).toBeGreaterThanOrEqual(1);
    expect(writesB.length).toBeLessThanOrEqual(targets.length);
    for (const w of writesB) {
      expect(`${w.method} ${pathOf(w)}`).toMatch(
        /^(POST \/crm\/v3\/objects\/contacts\/batch\/update|PATCH \/crm\/v3\/objects\/contacts\/\d+)$/,
      );
      expect(w.status).toBe(200);
    }
    const patched = writesB.filter((w) => w.method === 'PATCH').map(pathOf);
    expect(new Set(patched).size).toBe(patched.length);
    // And B's property history has exactly one new entry per edited property, our app's write.
    const historyAfter = await Promise.all(idsB.map((id) => historyInB(id, ['jobtitle', 'phone'])));
    historyAfter.forEach((after, i) => {
      for (const property of ['jobtitle', 'phone'] as const) {
        const added = (after[property] ?? []).slice(
          0,
          (after[property]?.length ?? 0) - (historyBefore[i]![property]?.length ?? 0),
        );
        expect(added.map((h) => [h.value, h.sourceType])).toEqual([[edits[i]![property], 'INTEGRATION']]);
      }
    });
    timings['4'] = Date.now() - t0;
  });

  it('6b. a mail from a person both CRMs know is one email activity in each CRM, never two', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const t0 = Date.now();
    const subject = 'Renewal terms for Acme';
    const ann = PEOPLE[0]!;
    await s.emulator.google.gmail.insert(EMAIL, {
      from: `${ann.firstname} ${ann.lastname} <${ann.email}>`,
      to: [EMAIL],
      subject,
      text: 'Can we talk about the renewal?',
      messageId: '<renewal-terms@acme.example>',
    });
    await waitFor(
      async () => [
        (await emailsSubjected(PORTAL_A, subject)).length,
        (await emailsSubjected(PORTAL_B, subject)).length,
      ],
      {
        until: ([a, b]) => (a ?? 0) >= 1 && (b ?? 0) >= 1,
        timeoutMs: 30_000,
        describe: "Ann's mail logged in both CRMs",
      },
    );
    expect((await emailsSubjected(PORTAL_A, subject)).length).toBe(1);
    expect((await emailsSubjected(PORTAL_B, subject)).length).toBe(1);
    await sleep(5_000);
    const a = await emailsSubjected(PORTAL_A, subject);
    const b = await emailsSubjected(PORTAL_B, subject);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    timings['6b'] = Date.now() - t0;
  });

  it('7. 429s and 500s at 5 % on every provider: edits converge, nothing twice; then a burst of 50 edits meets no 429', async ({
    onTestFailed,
  }) => {
    onTestFailed(dumpState);
    const t0 = Date.now();
    await settle();
    const logStart = (await s.emulator.requests()).length;

    // The emulator's faults hit "the next N calls": a steady trickle keeps 5 % of each
    // provider's calls (rounded up, so each provider meets both kinds) a 429 and another 5 %
    // a 500, as traffic comes.
    const RATE = 0.05;
    const armed: Record<string, number> = {};
    let trickling = true;
    const trickle = (async () => {
      while (trickling) {
        const since = (await s.emulator.requests()).slice(logStart);
        for (const service of ['hubspot', 'google'] as const) {
          const calls = since.filter((r) => r.service === service).length;
          for (const kind of ['rate-limit', 'server-error'] as const) {
            const want = Math.ceil(calls * RATE);
            const key = `${service}:${kind}`;
            const more = want - (armed[key] ?? 0);
            if (more > 0) {
              await s.emulator.fault({ service, kind, count: more });
              armed[key] = want;
            }
          }
        }
        await sleep(100);
      }
    })();
    const stopTrickle = async () => {
      trickling = false;
      await trickle;
      await s.emulator.clearFaults();
    };

    let expected: Map<string, { jobtitle: string; phone: string }>;
    // One mail per round, each from another person both CRMs know.
    const faultSubjects = [0, 1, 2, 3, 4].map((round) => `Quarterly numbers, part ${round + 1}`);
    try {
      const inA = await byEmail(PORTAL_A);
      const inB = await byEmail(PORTAL_B);
      expected = new Map();
      // Five rounds: A edits every person's job title, B every person's phone.
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          PEOPLE.flatMap((p, i) => {
            const jobtitle = `Title r${round} p${i}`;
            const phone = `+44 20 7946 ${round}${i}00`;
            expected.set(p.email, { jobtitle, phone });
            return [
              s.emulator.hubspot.updateContact(PORTAL_A, inA.get(p.email)!.id, { jobtitle }),
              s.emulator.hubspot.updateContact(PORTAL_B, inB.get(p.email)!.id, { phone }),
            ];
          }),
        );
        const sender = PEOPLE[round + 1]!;
        await s.emulator.google.gmail.insert(EMAIL, {
          from: `${sender.firstname} ${sender.lastname} <${sender.email}>`,
          to: [EMAIL],
          subject: faultSubjects[round],
          text: 'Numbers attached.',
          messageId: `<quarterly-numbers-${round}@syncline-e2e.example>`,
        });
        await sleep(400);
      }
      const converged = async () => {
        const a = await byEmail(PORTAL_A);
        const b = await byEmail(PORTAL_B);
        const off: string[] = [];
        for (const [email, want] of expected) {
          for (const [name, portal] of [
            ['A', a],
            ['B', b],
          ] as const) {
            const got = portal.get(email)?.properties;
            if (got?.jobtitle !== want.jobtitle || got?.phone !== want.phone)
              off.push(`${name} ${email}: ${got?.jobtitle}/${got?.phone}`);
          }
        }
        for (const subject of faultSubjects) {
          const mails = [
            (await emailsSubjected(PORTAL_A, subject)).length,
            (await emailsSubjected(PORTAL_B, subject)).length,
          ];
          if (mails[0] !== 1 || mails[1] !== 1) off.push(`${subject}: ${mails}`);
        }
        return off;
      };
      await waitFor(converged, {
        until: (off) => off.length === 0,
        timeoutMs: 45_000,
        intervalMs: 250,
        describe: 'both CRMs to hold every last edit (and each mail once) under faults',
      });
    } finally {
      await stopTrickle();
    }
    timings['7-faults-converged'] = Date.now() - t0;

    // The faults really happened, on both providers.
    const faultLog = (await s.emulator.requests()).slice(logStart);
    const tally = (service: string, status: number) =>
      faultLog.filter((r) => r.service === service && r.status === status).length;
    const seen = {
      hubspot429: tally('hubspot', 429),
      hubspot500: tally('hubspot', 500),
      google429: tally('google', 429),
      google500: tally('google', 500),
      hubspotCalls: faultLog.filter((r) => r.service === 'hubspot').length,
      googleCalls: faultLog.filter((r) => r.service === 'google').length,
    };
    console.log('scenario 7 faults', JSON.stringify({ seen, armed }));
    expect(seen.hubspot429).toBeGreaterThan(0);
    expect(seen.hubspot500).toBeGreaterThan(0);
    expect(seen.google429).toBeGreaterThan(0);
    expect(seen.google500).toBeGreaterThan(0);

    // Still so once everything is quiet, and no one twice anywhere.
    await settle();
    const a = await contacts(PORTAL_A);
    const b = await contacts(PORTAL_B);
    const emails = (list: HubspotRecord[]) => list.map((c) => c.properties.email?.toLowerCase() ?? '').sort();
    const everyone = [
      ...PEOPLE.map((p) => p.email),
      ...Array.from({ length: BURST }, (_, n) => burstEmail(n + 1)),
    ].sort();
    expect(emails(a)).toEqual(everyone);
    expect(emails(b)).toEqual(everyone);
    const aByEmail = await byEmail(PORTAL_A);
    const bByEmail = await byEmail(PORTAL_B);
    for (const [email, want] of expected!) {
      expect([
        email,
        aByEmail.get(email)?.properties.jobtitle,
        aByEmail.get(email)?.properties.phone,
      ]).toEqual([email, want.jobtitle, want.phone]);
      expect([
        email,
        bByEmail.get(email)?.properties.jobtitle,
        bByEmail.get(email)?.properties.phone,
      ]).toEqual([email, want.jobtitle, want.phone]);
    }
    for (const subject of faultSubjects) {
      expect([subject, (await emailsSubjected(PORTAL_A, subject)).length]).toEqual([subject, 1]);
      expect([subject, (await emailsSubjected(PORTAL_B, subject)).length]).toEqual([subject, 1]);
    }

    // Faults cleared, HubSpot's normal limits: a burst of 50 edits (25 in each CRM) goes
    // through without a single 429.
    const t1 = Date.now();
    const portalSettings = await s.emulator.hubspot.portal(PORTAL_A);
    expect(portalSettings.limits).toMatchObject({ per10s: 110, searchPerSecond: 5 });
    const burstLogStart = (await s.emulator.requests()).length;
    const half = BURST / 2;
    await Promise.all(
      Array.from({ length: BURST }, (_, i) => {
        const email = burstEmail(i + 1);
        return i < half
          ? s.emulator.hubspot.updateContact(PORTAL_A, aByEmail.get(email)!.id, {
              jobtitle: `Burst title ${i}`,
            })
          : s.emulator.hubspot.updateContact(PORTAL_B, bByEmail.get(email)!.id, { phone: `+1 555 77${i}` });
      }),
    );
    await waitFor(
      async () => {
        const inA = await byEmail(PORTAL_A);
        const inB = await byEmail(PORTAL_B);
        return Array.from({ length: BURST }, (_, i) =>
          i < half
            ? inB.get(burstEmail(i + 1))?.properties.jobtitle === `Burst title ${i}`
            : inA.get(burstEmail(i + 1))?.properties.phone === `+1 555 77${i}`,
        ).filter((ok) => !ok).length;
      },
      {
        until: (missing) => missing === 0,
        timeoutMs: 45_000,
        intervalMs: 250,
        describe: 'the 50 burst edits in the other CRM',
      },
    );
    await settle(2_000);
    const burstLog = (await s.emulator.requests()).slice(burstLogStart);
    console.log(
      'scenario 7 burst',
      JSON.stringify({
        ms: Date.now() - t1,
        calls: burstLog.length,
        hubspotWrites: burstLog.filter((r) => r.service === 'hubspot' && isWrite(r)).length,
      }),
    );
    expect(burstLog.filter((r) => r.status === 429)).toEqual([]);
    timings['7'] = Date.now() - t0;
  });
});
