import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ConnectionContext,
  type Connector,
  type Cursor,
  googleCalendarConnector,
  hubspotConnector,
  StaticTokenSource,
  unlimitedBudget,
} from '@syncline/connectors';
import { startEmulators } from '@syncline/emulators';
import { IdentityService } from '@syncline/identity';
import { ChangeLog, groupLag, LogConsumer, type LogHandler, resetGroup } from '@syncline/log';
import { Pool } from 'pg';
import { ensureDatabase, migrate } from '../prisma/migrator';

/**
 * The demo, end to end on this machine's PostgreSQL and Redis and the local emulators:
 * a workspace and its admin key; the API with connections whose credentials are encrypted
 * at rest; a burst of webhook-like changes (with redeliveries) on the log, a consumer group
 * of two members deriving a per-record view, and a replay into a fresh group that derives
 * the same view; then a HubSpot portal and a Google Calendar in the emulators, backfilled
 * through the connectors and the official SDKs onto the log, and resolved by identity into
 * one person per human, however each system spells the address.
 */

const root = join(__dirname, '..');
const server = process.env.DEMO_PG_SERVER ?? 'postgresql://postgres@127.0.0.1:5432';
const databaseUrl = `${server}/syncline_demo`;
const port = Number(process.env.DEMO_PORT ?? 3917);
const say = (line: string) => console.log(line);

function demoKey(): string {
  const dir = join(root, '.tools');
  const file = join(dir, 'demo-encryption-key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, `demo:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

async function waitReady(url: string, api: ChildProcess): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (api.exitCode !== null) throw new Error(`the API exited with code ${api.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the API did not become ready at ${url}`);
}

async function main(): Promise<void> {
  say('1. Database: a fresh syncline_demo, migrated by our migrator');
  const admin = new Pool({ connectionString: `${server}/postgres`, max: 1 });
  await admin.query('DROP DATABASE IF EXISTS syncline_demo WITH (FORCE)');
  await admin.end();
  await ensureDatabase(databaseUrl);
  const report = await migrate(databaseUrl);
  say(`   applied: ${report.applied.join(', ')}`);

  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    SYNCLINE_ENCRYPTION_KEYS: demoKey(),
    REDIS_PREFIX: 'syncline-demo',
    LOG_LEVEL: 'warn',
  };

  say('2. A workspace and its first admin API key (the CLI prints the key once)');
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      ['-r', '@swc-node/register', 'apps/sync-api/src/cli.ts', 'create-workspace', '--name', 'Demo Co'],
      {
        cwd: root,
        env,
        encoding: 'utf8',
      },
    ),
  ) as { workspaceId: string; apiKey: string };
  say(`   workspace ${created.workspaceId}, key ${created.apiKey.slice(0, 12)}…`);

  say(`3. The sync API on http://127.0.0.1:${port}`);
  const api = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/sync-api/src/main.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${base}/readyz`, api);
    const auth = { authorization: `Bearer ${created.apiKey}`, 'content-type': 'application/json' };
    const res = await fetch(`${base}/api/v1/connections`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        provider: 'hubspot',
        externalAccountId: 'portal-101',
        displayName: 'Demo HubSpot portal',
        credentials: { accessToken: 'demo-access-token', refreshToken: 'demo-refresh-token' },
      }),
    });
    const connection = (await res.json()) as { id: string; provider: string; status: string };
    say(`   POST /api/v1/connections → ${res.status} ${JSON.stringify(connection)}`);
    const noKey = await fetch(`${base}/api/v1/connections/${connection.id}`);
    say(`   the same connection without a key → ${noKey.status} ${await noKey.text()}`);

    const pool = new Pool({ connectionString: databaseUrl, max: 6 });
    const stored = await pool.query<{ credentials_key_id: string; bytes: number }>(
      'SELECT credentials_key_id, length(credentials_ciphertext) AS bytes FROM connection WHERE id = $1',
      [connection.id],
    );
    say(
      `   at rest: ${stored.rows[0]!.bytes} bytes of AES-256-GCM under key "${stored.rows[0]!.credentials_key_id}"`,
    );

    say('4. 20,000 webhook-like changes on the log, 10 % of them delivered twice');
    const log = new ChangeLog(pool, { partitions: 16 });
    await log.init();
    const changes = Array.from({ length: 20_000 }, (_, i) => ({
      workspaceId: created.workspaceId,
      connectionId: connection.id,
      entityType: 'person' as const,
      externalId: `contact-${i % 500}`,
      op: 'upsert' as const,
      eventKey: `contact-${i % 500}:${i}:${randomUUID()}`,
      eventTime: new Date(Date.UTC(2026, 10, 1) + i * 1000),
      fields: {
        email: `person${i % 500}@example.com`,
        lifecyclestage: ['lead', 'opportunity', 'customer'][i % 3],
      },
    }));
    const redelivered = changes.filter((_, i) => i % 10 === 0);
    const started = Date.now();
    const results = await Promise.all(
      [...changes, ...redelivered]
        .reduce<(typeof changes)[]>((batches, c, i) => {
          if (i % 100 === 0) batches.push([]);
          batches[batches.length - 1]!.push(c);
          return batches;
        }, [])
        .map((batch) => log.append(batch)),
    );
    const outcomes = results.flatMap((r) => (r.ok ? r.value : []));
    say(
      `   ${outcomes.filter((o) => o.isNew).length} new, ${outcomes.filter((o) => !o.isNew).length} redeliveries dropped, in ${Date.now() - started} ms`,
    );
    const bad = await log.append([{ ...changes[0], entityType: 'spaceship' }]);
    say(`   a bad change is refused: ${bad.ok ? 'accepted?!' : bad.error.message}`);

    say('5. A consumer group of two members derives a per-record view, offsets committed with it');
    await pool.query(`CREATE TABLE demo_person_view (external_id text PRIMARY KEY, email text, stage text,
                      changes int NOT NULL, group_name text NOT NULL)`);
    const viewHandler: LogHandler = async (tx, events, { group }) => {
      for (const e of events) {
        await tx.query(
          `INSERT INTO demo_person_view (group_name, external_id, email, stage, changes) VALUES ($1, $2, $3, $4, 1)
           ON CONFLICT (external_id) DO UPDATE SET email = EXCLUDED.email, stage = EXCLUDED.stage,
             changes = demo_person_view.changes + 1`,
          [group, `${group}/${e.externalId}`, e.fields.email, e.fields.lifecyclestage],
        );
      }
    };
    const members = [0, 1].map(
      () =>
        new LogConsumer({
          connection: databaseUrl,
          group: 'view',
          partitions: 16,
          handler: viewHandler,
          rebalanceMs: 200,
        }),
    );
    await Promise.all(members.map((m) => m.start()));
    const t0 = Date.now();
    while ((await groupLag(pool, 'view')).some((p) => p.lag > 0)) await new Promise((r) => setTimeout(r, 50));
    say(
      `   caught up in ${Date.now() - t0} ms; member partitions: ${members.map((m) => `[${m.ownedPartitions().join(',')}]`).join(' ')}`,
    );
    await Promise.all(members.map((m) => m.stop()));

    say('6. Replay: a fresh group reads the log from offset 0 and derives the same view');
    await resetGroup(pool, 'view-rebuilt', 16, 'beginning');
    const rebuilt = new LogConsumer({
      connection: databaseUrl,
      group: 'view-rebuilt',
      partitions: 16,
      handler: viewHandler,
    });
    await rebuilt.start();
    await rebuilt.processAvailable();
    await rebuilt.stop();
    const compare = await pool.query<{
      group_name: string;
      digest: string;
      records: number;
      changes: number;
    }>(
      `SELECT group_name, md5(string_agg(split_part(external_id, '/', 2) || email || stage || changes, ',' ORDER BY external_id)) AS digest,
              count(*)::int AS records, sum(changes)::int AS changes
         FROM demo_person_view GROUP BY group_name ORDER BY group_name`,
    );
    for (const row of compare.rows)
      say(`   ${row.group_name}: ${row.records} records, ${row.changes} changes, digest ${row.digest}`);
    const same = compare.rows.length === 2 && compare.rows[0]!.digest === compare.rows[1]!.digest;
    say(same ? '   identical ✔' : '   DIFFERENT ✘');
    if (!same) process.exitCode = 1;

    await emulatorDemo({ base, auth, pool, log, workspaceId: created.workspaceId });
    await log.close();
    await pool.end();
  } finally {
    api.kill('SIGTERM');
  }
}

interface DemoContext {
  base: string;
  auth: Record<string, string>;
  pool: Pool;
  log: ChangeLog;
  workspaceId: string;
}

async function emulatorDemo({ base, auth, pool, log, workspaceId }: DemoContext): Promise<void> {
  say('7. The emulators: a HubSpot portal and a Google Calendar, acting as the salesperson in each');
  const emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  try {
    const post = async (url: string, body: unknown) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${url} → ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    const portal = await post(`${emulators.hubspotUrl}/_emulator/hubspot/portals`, {
      portalId: 101,
      appId: 5001,
      clientSecret: 'demo-client-secret',
    });
    const people = Array.from({ length: 60 }, (_, i) => ({
      email: `person${i}@acme-${i % 5}.example`,
      firstname: ['Dana', 'Ravi', 'Mei', 'Tomás', 'Ada'][i % 5]!,
      lastname: `Lee ${i}`,
    }));
    for (const p of people)
      await post(`${emulators.hubspotUrl}/_emulator/hubspot/portals/101/ui/contacts`, { properties: p });
    const user = await post(`${emulators.googleUrl}/_emulator/google/users`, { email: 'dana@demo.example' });
    for (let i = 0; i < 20; i++) {
      const start = new Date(Date.UTC(2026, 11, 1 + i, 15));
      await post(`${emulators.googleUrl}/_emulator/google/users/dana@demo.example/ui/calendar/events`, {
        summary: `Call ${i}`,
        start: { dateTime: start.toISOString() },
        end: { dateTime: new Date(start.getTime() + 1_800_000).toISOString() },
        // Two known contacts, spelt in capitals as calendars often do, and one stranger.
        attendees: [
          { email: people[i]!.email.toUpperCase() },
          { email: people[i + 20]!.email },
          { email: `guest${i}@elsewhere.example` },
        ],
      });
    }
    say(
      `   HubSpot portal 101 with ${people.length} contacts; Google Calendar of dana@demo.example with 20 meetings`,
    );

    const connect = async (provider: string, externalAccountId: string, token: string) => {
      const res = await fetch(`${base}/api/v1/connections`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ provider, externalAccountId, credentials: { accessToken: token } }),
      });
      return ((await res.json()) as { id: string }).id;
    };
    const endpoints = {
      hubspotBaseUrl: emulators.hubspotUrl,
      googleRootUrl: `${emulators.googleUrl}/`,
      googleTokenUrl: `${emulators.googleUrl}/token`,
    };
    const sources: [Connector, string, string][] = [
      [
        hubspotConnector,
        await connect('hubspot', 'portal-101-emulated', String(portal.accessToken)),
        String(portal.accessToken),
      ],
      [
        googleCalendarConnector,
        await connect('google-calendar', 'dana@demo.example', String(user.accessToken)),
        String(user.accessToken),
      ],
    ];

    say('8. Backfill through the connectors (official SDKs against the emulators) onto the log');
    for (const [connector, connectionId, token] of sources) {
      const ctx: ConnectionContext = {
        connectionId,
        workspaceId,
        externalAccountId: connector.provider,
        tokens: new StaticTokenSource(token),
        budget: unlimitedBudget,
        endpoints,
      };
      let cursor: Cursor = {};
      let appended = 0;
      for (;;) {
        const page = await connector.backfill(ctx, cursor);
        if (!page.ok)
          throw new Error(`${connector.provider} backfill: ${page.error.code} ${page.error.message}`);
        const res = await log.append(page.value.changes);
        if (!res.ok) throw new Error(res.error.message);
        appended += res.value.filter((r) => r.isNew).length;
        cursor = page.value.cursor;
        if (page.value.done) break;
      }
      say(
        `   ${connector.provider}: ${appended} changes appended, cursor ${JSON.stringify(cursor).slice(0, 60)}…`,
      );
    }

    say('9. Identity, as a consumer group: one person per human across both systems');
    const identity = new IdentityService();
    const resolver = new LogConsumer({
      connection: pool.options.connectionString!,
      group: 'identity',
      partitions: 16,
      handler: (tx, events) => identity.handle(tx, events),
    });
    await resolver.start();
    await resolver.processAvailable();
    await resolver.stop();
    const [hubspotId, calendarId] = sources.map(([, id]) => id);
    const { rows } = await pool.query<{ people: number; both: number; only_calendar: number }>(
      `WITH person AS (
         SELECT e.id,
                bool_or(l.connection_id = $1) AS in_hubspot,
                bool_or(l.connection_id = $2) AS in_calendar
           FROM entity e JOIN source_link l ON l.entity_id = e.id
          WHERE e.workspace_id = $3 AND e.entity_type = 'person' AND e.merged_into IS NULL
            AND l.connection_id IN ($1, $2)
          GROUP BY e.id)
       SELECT count(*)::int AS people,
              count(*) FILTER (WHERE in_hubspot AND in_calendar)::int AS both,
              count(*) FILTER (WHERE in_calendar AND NOT in_hubspot)::int AS only_calendar
         FROM person`,
      [hubspotId, calendarId, workspaceId],
    );
    const r = rows[0]!;
    say(
      `   ${r.people} people from 60 contacts and 20 meetings: ${r.both} known to both HubSpot and the calendar (matched whatever the case of the address), ${r.only_calendar} met only in the calendar`,
    );
    if (r.both !== 40) process.exitCode = 1;
  } finally {
    await emulators.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
