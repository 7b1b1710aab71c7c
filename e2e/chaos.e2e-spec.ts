import { Mulberry32 } from '@syncline/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HubspotRecord } from './support/emulator-client';
import { grantCredentials } from './support/emulator-client';
import { type SyncSystem, sleep, startSystem, waitFor } from './support/system';

// Scenario 10: while changes flow from two CRMs, the workers and the API are killed with
// SIGKILL at random moments and restarted. Afterwards every system holds the same values for
// every field, every edit's last value won, nothing was lost and no record was made twice.

const PORTAL_A = 4101;
const PORTAL_B = 4102;
const PEOPLE = 300;
const CHANGES = Number(process.env.CHAOS_CHANGES ?? 20_000);
const KILLS = 3;
const FIRST = [
  'Ada',
  'Bao',
  'Chiara',
  'Dmitri',
  'Emeka',
  'Fatima',
  'Goran',
  'Hana',
  'Ines',
  'Jonas',
  'Kwame',
  'Leila',
  'Mateo',
  'Noor',
  'Olga',
  'Pita',
  'Quentin',
  'Rania',
  'Sven',
  'Tomoko',
];
const LAST = [
  'Abara',
  'Berg',
  'Castillo',
  'Dubois',
  'Eriksen',
  'Fujita',
  'Gallo',
  'Haddad',
  'Ivanova',
  'Jensen',
  'Kaur',
  'Lindqvist',
  'Moreau',
  'Nakamura',
  'Okafor',
  'Petrov',
  'Quispe',
  'Rossi',
  'Sato',
  'Tanaka',
];

describe('chaos: SIGKILL of workers and API while 20,000 changes flow', () => {
  let s: SyncSystem;
  const rng = new Mulberry32(20261130);
  const random = () => rng.next();
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const emailOf = (i: number) => `person${i}@chaos.example`;

  beforeAll(async () => {
    s = await startSystem({ label: 'chaos', workers: 2, pullIntervalMs: 1_000 });
    const unlimited = { per10s: 1_000_000, searchPerSecond: 10_000 };
    const a = await s.emulator.hubspot.createPortal({
      portalId: PORTAL_A,
      webhooks: true,
      limits: unlimited,
    });
    const b = await s.emulator.hubspot.createPortal({
      portalId: PORTAL_B,
      webhooks: true,
      limits: unlimited,
    });
    for (let i = 0; i < PEOPLE; i++) {
      await s.emulator.hubspot.createContact(i % 3 === 0 ? PORTAL_B : PORTAL_A, {
        email: emailOf(i),
        firstname: FIRST[i % FIRST.length]!,
        lastname: LAST[Math.floor(i / FIRST.length) % LAST.length]!,
      });
    }
    await s.connect('hubspot', String(PORTAL_A), grantCredentials(a));
    await s.connect('hubspot', String(PORTAL_B), grantCredentials(b));
  }, 180_000);

  afterAll(async () => {
    await s?.stop();
  });

  const contactsByEmail = async (portal: number): Promise<Map<string, HubspotRecord[]>> => {
    const out = new Map<string, HubspotRecord[]>();
    for (const c of await s.emulator.hubspot.objects(portal, 'contacts')) {
      const email = c.properties.email ?? '';
      out.set(email, [...(out.get(email) ?? []), c]);
    }
    return out;
  };

  it('converges to the last edit everywhere, with no record twice', async ({ onTestFailed }) => {
    // The people still wrong at the last look, for the trail printed on failure.
    let stillWrong: string[] = [];
    onTestFailed(async () => {
      s.dumpLogs('chaos');
      // Each diverged person's whole trail: what each CRM reported, what we owed and wrote.
      for (const email of stillWrong.slice(0, 3)) {
        const [entity] = await s.query<{ entity_id: string }>(
          `SELECT l.entity_id FROM source_link l JOIN change_event ev
              ON ev.connection_id = l.connection_id AND ev.external_id = l.external_id
            WHERE lower(ev.fields->>'email') = $1 LIMIT 1`,
          [email],
        );
        if (!entity) continue;
        const id = entity.entity_id;
        console.log(
          `trail of ${email} (entity ${id})`,
          await s.query(`SELECT fields->>'jobTitle' AS title, heads, version FROM entity WHERE id = $1`, [
            id,
          ]),
          await s.query(
            `SELECT ev.connection_id, ev.event_key, ev.fields->>'jobTitle' AS title, ev.event_time, ev.ingested_at,
                    ev.provider_version, ev.origin::text AS origin
               FROM change_event ev JOIN source_link l
                 ON l.connection_id = ev.connection_id AND l.external_id = ev.external_id
              WHERE l.entity_id = $1 ORDER BY ev.ingested_at DESC LIMIT 25`,
            [id],
          ),
          await s.query(
            `SELECT id, connection_id, op, status, fields->>'jobTitle' AS title, attempts, last_error, created_at,
                    claimed_at, sent_at
               FROM outbox WHERE entity_id = $1 ORDER BY id DESC LIMIT 15`,
            [id],
          ),
          await s.query(
            `SELECT connection_id, fields->>'jobTitle' AS title, provider_version, sent_at, applied_at
               FROM write_receipt WHERE entity_id = $1 ORDER BY sent_at DESC LIMIT 10`,
            [id],
          ),
          await s.query(
            `SELECT connection_id, external_id, provider_version FROM source_link WHERE entity_id = $1`,
            [id],
          ),
        );
      }
      console.log(
        await s.query(
          `SELECT connection_id, op, status, count(*)::int AS n FROM outbox GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
        ),
        await s.query(`SELECT connection_id, count(*)::int AS n FROM source_link GROUP BY 1`),
        await s.query(
          `SELECT entity_type, count(*)::int AS n, count(*) FILTER (WHERE merged_into IS NOT NULL)::int AS merged FROM entity GROUP BY 1`,
        ),
        await s.query(`SELECT id, status, reconciled_at, backfill_seen FROM connection`),
        await s.query(`SELECT error_code, error_message FROM dead_letter LIMIT 5`),
        await s.query(`SELECT count(*)::int AS n FROM possible_duplicate`),
        await s.query(
          `SELECT l.entity_id, array_agg(DISTINCT lower(ev.fields->>'email')) AS emails,
                  array_agg(DISTINCT ev.fields->>'firstName' || ' ' || (ev.fields->>'lastName')) AS names,
                  array_agg(DISTINCT ev.origin::text) AS origins
             FROM source_link l JOIN change_event ev ON ev.connection_id = l.connection_id AND ev.external_id = l.external_id
            GROUP BY 1 HAVING count(DISTINCT lower(ev.fields->>'email')) > 1`,
        ),
        await s.query(`SELECT l.entity_id, l.connection_id, l.external_id FROM source_link l
            WHERE l.entity_id IN (SELECT entity_id FROM source_link GROUP BY 1 HAVING count(*) <> 2)`),
        await s.query(
          `SELECT ev.partition, ev.connection_id, count(*)::int AS behind, min(ev."offset")::text AS first, o.committed_offset::text
             FROM change_event ev LEFT JOIN consumer_offset o ON o.group_name = 'sync' AND o.partition = ev.partition
            WHERE ev."offset" > COALESCE(o.committed_offset, 0) GROUP BY 1, 2, o.committed_offset`,
        ),
        await s.query(
          `SELECT group_name, partition, committed_offset::text FROM consumer_offset ORDER BY 1, 2`,
        ),
        await s.query(
          `SELECT pid, state, wait_event_type, wait_event, left(query, 160) AS query, (now() - xact_start)::text AS xact_age
             FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        ),
        await s.query(
          `SELECT pid, classid, objid, objsubid, granted FROM pg_locks WHERE locktype = 'advisory' ORDER BY pid, objid`,
        ),
      );
    });
    // Every person exists once in both CRMs before the storm.
    await waitFor(
      async () => (await contactsByEmail(PORTAL_B)).size + (await contactsByEmail(PORTAL_A)).size,
      {
        until: (n) => n === 2 * PEOPLE,
        timeoutMs: 120_000,
        describe: 'every person in both CRMs',
      },
    );
    const ids = new Map<string, { a: string; b: string }>();
    const [inA, inB] = [await contactsByEmail(PORTAL_A), await contactsByEmail(PORTAL_B)];
    for (let i = 0; i < PEOPLE; i++) {
      ids.set(emailOf(i), { a: inA.get(emailOf(i))![0]!.id, b: inB.get(emailOf(i))![0]!.id });
    }

    // The storm: edits alternate at random between the two CRMs; kills happen in between.
    const last = new Map<string, string>();
    const lastAt = new Map<string, number>();
    const killAt = new Set(
      Array.from({ length: KILLS * 2 }, (_, k) => Math.floor(((k + 1) * CHANGES) / (KILLS * 2 + 1))),
    );
    const restarts: Promise<unknown>[] = [];
    const started = Date.now();
    for (let n = 0; n < CHANGES; n++) {
      if (killAt.has(n)) {
        // One victim at a time: a process is killed only once it is back from the last kill.
        await Promise.all(restarts);
        const victim = pick(['workers', 'workers-2', 'api']);
        await s.kill(victim, 'SIGKILL');
        restarts.push(sleep(500 + random() * 1_500).then(() => s.restart(victim)));
      }
      const email = emailOf(Math.floor(random() * PEOPLE));
      // Two edits of one person a few milliseconds apart: event time, not arrival, orders them.
      const gap = Date.now() - (lastAt.get(email) ?? 0);
      if (gap < 3) await sleep(3 - gap);
      const value = `v${n}`;
      const { a, b } = ids.get(email)!;
      if (random() < 0.5) await s.emulator.hubspot.updateContact(PORTAL_A, a, { jobtitle: value });
      else await s.emulator.hubspot.updateContact(PORTAL_B, b, { jobtitle: value });
      last.set(email, value);
      lastAt.set(email, Date.now());
    }
    await Promise.all(restarts);
    const storm = Date.now() - started;

    const diverged = async () => {
      const [ca, cb] = [await contactsByEmail(PORTAL_A), await contactsByEmail(PORTAL_B)];
      const wrong: string[] = [];
      for (const [email, value] of last) {
        const va = ca.get(email)?.[0]?.properties.jobtitle;
        const vb = cb.get(email)?.[0]?.properties.jobtitle;
        if (va !== value || vb !== value) wrong.push(`${email}: want ${value}, A ${va}, B ${vb}`);
      }
      stillWrong = wrong.map((w) => w.split(':')[0]!);
      return wrong;
    };
    const wrong = await waitFor(diverged, {
      until: (w) => w.length === 0,
      timeoutMs: 300_000,
      intervalMs: 2_000,
      describe: 'both CRMs hold every person’s last edit',
    });
    expect(wrong).toEqual([]);
    // No record twice, in either CRM.
    for (const portal of [PORTAL_A, PORTAL_B]) {
      const contacts = await contactsByEmail(portal);
      expect(contacts.size).toBe(PEOPLE);
      expect([...contacts.values()].filter((list) => list.length > 1)).toEqual([]);
    }
    const dead = await s.query<{ n: number }>(`SELECT count(*)::int AS n FROM dead_letter`);
    expect(dead[0]!.n).toBe(0);
    console.log(JSON.stringify({ chaos: { changes: CHANGES, kills: KILLS * 2, stormMs: storm } }));
  }, 1_200_000);
});
