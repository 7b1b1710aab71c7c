import { randomBytes, randomUUID } from 'node:crypto';
import { MergeEngine, PgMergeStore } from '@syncline/conflicts';
import { ENTITY_TYPES } from '@syncline/core';
import type { PrismaClient } from '@syncline/core/db';
import { startEmulators } from '@syncline/emulators';
import { Pool } from 'pg';
import { SYNC_CONSUMER_GROUP } from '../../connections/connections.repository';
import { MERGE_RESOURCES } from '../../identity-review/identity-review.schemas';
import { RECORD_RESOURCES } from '../../records/records.schemas';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../../testing/test-app';
import { FREE_KEY } from './schema-values';

/** A workspace with an admin and a sales key. */
export interface Tenant {
  workspaceId: string;
  adminKey: string;
  salesKey: string;
}

/** Workspace A: a row of every kind a route can address by id, all of it marked. */
export interface SeededTenant extends Tenant {
  /** A's ids by kind (`entity:person`, `merge_conflict`, `api_key:spare`, …). */
  ids: Record<string, string>;
  /** Text that only A's rows hold (names, field values, payloads). */
  marker: string;
  /** A's secrets: key secrets and connection credentials, which no response may ever carry. */
  secrets: string[];
  /** Everything of A that must not reach another workspace: ids, key prefixes, the marker, its accounts. */
  needles: string[];
  /**
   * A's provider account ids (its portals): a connection's answers carry these rather than the
   * marker, since the provider names the account (a portal id is a number).
   */
  accounts: string[];
}

/** The types a record can be merged into another of (identity-review's merge routes). */
const MERGEABLE = new Set<string>(MERGE_RESOURCES.map((resource) => RECORD_RESOURCES[resource]));

/**
 * The API with every optional integration configured, so that no route answers 503 for want of a
 * setting. HubSpot is an emulator: a mappings PUT asks the portal for its properties, and must
 * never reach the real HubSpot (the seeded token is unknown there, so it answers 401).
 */
export async function startConfiguredApp(label: string): Promise<TestApp> {
  const emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  const t = await startTestApp(label, {
    HUBSPOT_CLIENT_ID: 'openapi-suite',
    HUBSPOT_CLIENT_SECRET: 'openapi-suite-secret',
    GOOGLE_CLIENT_ID: 'openapi-suite.apps.googleusercontent.com',
    GOOGLE_CLIENT_SECRET: 'openapi-suite-secret',
    HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
    // A connection's account is proven by asking the provider: the emulators, never the real ones.
    GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
    GOOGLE_TOKEN_URL: `${emulators.googleUrl}/token`,
    MICROSOFT_CLIENT_ID: 'openapi-suite-microsoft',
    MICROSOFT_CLIENT_SECRET: 'openapi-suite-secret',
    MICROSOFT_GRAPH_URL: emulators.microsoftUrl,
    MICROSOFT_LOGIN_URL: emulators.microsoftUrl,
  });
  return {
    ...t,
    async close() {
      await t.close();
      await emulators.close();
    },
  };
}

/**
 * Workspace A with one row of every kind an API route reads or acts on, and workspace B with
 * its own admin and sales keys (and one record of each type, so its lists are not empty).
 */
export async function seedTwoWorkspaces(t: TestApp): Promise<{ a: SeededTenant; b: Tenant }> {
  const marker = `acme-only-${randomBytes(6).toString('hex')}`;
  // A's portals in the emulator, with private app tokens that prove them (and must never leak).
  // Ten digits, so that no other number in an answer (or hex in an id) is mistaken for one.
  const portalId = 1_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
  const portal = await emulatorPortal(t.config.HUBSPOT_API_BASE_URL, portalId);
  const dryRunPortal = await emulatorPortal(t.config.HUBSPOT_API_BASE_URL, portalId + 1);
  const token = portal.privateAppToken;
  const a = await seedWorkspace(t.prisma, 'Acme');
  const b = await seedWorkspace(t.prisma, 'Globex');
  const api = async (key: string, method: 'POST' | 'PUT', url: string, payload: object) => {
    const res = await t.app.inject({ method, url, headers: bearer(key), payload });
    if (res.statusCode >= 300)
      throw new Error(`seeding: ${method} ${url} answered ${res.statusCode} ${res.body}`);
    return res.json<{ id: string; key?: string }>();
  };
  const newKey = async (adminKey: string, name: string, role: 'sales' | 'admin') =>
    api(adminKey, 'POST', '/api/v1/api-keys', { name, role });

  const sales = await newKey(a.adminKey, `rep ${marker}`, 'sales');
  const spare = await newKey(a.adminKey, `spare ${marker}`, 'sales');
  const bSales = await newKey(b.adminKey, 'globex rep', 'sales');
  const connection = await api(a.adminKey, 'POST', '/api/v1/connections', {
    provider: 'hubspot',
    externalAccountId: portal.externalAccountId,
    displayName: `HubSpot ${marker}`,
    credentials: { privateAppToken: token },
  });
  await api(a.adminKey, 'PUT', `/api/v1/connections/${connection.id}/credentials`, {
    credentials: { privateAppToken: token },
  });
  // A connection in dry run, with one staged change: what its report reads.
  const dryRun = await api(a.adminKey, 'POST', '/api/v1/connections', {
    provider: 'hubspot',
    externalAccountId: dryRunPortal.externalAccountId,
    displayName: `HubSpot dry run ${marker}`,
    credentials: { privateAppToken: dryRunPortal.privateAppToken },
    dryRun: true,
  });
  await t.prisma.$executeRaw`
    INSERT INTO staged_change (workspace_id, connection_id, event_key, entity_type, external_id, op, fields, event_time)
    VALUES (${a.workspaceId}::uuid, ${dryRun.id}::uuid, ${`contact-dry-${marker}:1`}, 'person', ${`contact-dry-${marker}`},
            'upsert', ${JSON.stringify({ email: `${marker}@dry-run.example`, [FREE_KEY]: marker })}::json,
            '2026-11-20T10:00:00.000Z')`;
  const ids: Record<string, string> = {
    workspace: a.workspaceId,
    connection: connection.id,
    'connection:dry_run': dryRun.id,
    'api_key:sales': sales.id,
    'api_key:spare': spare.id,
  };
  const keys = await t.prisma.apiKey.findMany({ where: { workspaceId: a.workspaceId } });
  const adminRow = keys.find((k) => k.role === 'admin');
  if (!adminRow?.userId) throw new Error('seeding: the admin key of A has no user');
  ids['api_key:admin'] = adminRow.id;
  ids.user = adminRow.userId;
  // A second member, whom a member route may change or remove (the admin is the last one).
  ids['member:sales'] = (
    await t.prisma.member.create({
      data: {
        workspaceId: a.workspaceId,
        email: `rep-${marker}@acme.example`,
        name: `Rep ${marker}`,
        role: 'sales',
      },
      select: { id: true },
    })
  ).id;

  // A custom field every record carries and the connection maps, so edits and policies of it are valid for A.
  await t.prisma.$executeRaw`
    UPDATE connection SET field_mappings = ${JSON.stringify(
      Object.fromEntries(ENTITY_TYPES.map((type) => [`${type}.${FREE_KEY}`, FREE_KEY])),
    )}::jsonb WHERE id = ${connection.id}::uuid`;
  for (const type of ENTITY_TYPES) {
    ids[`entity:${type}`] = await insertEntity(t.prisma, a.workspaceId, type, marker);
    // Right after it, so that a merge aimed at the record names its duplicate (aimed-requests.ts).
    if (MERGEABLE.has(type))
      ids[`entity:${type}-duplicate`] = await insertEntity(t.prisma, a.workspaceId, type, marker);
    await insertEntity(t.prisma, b.workspaceId, type, 'globex');
  }
  await t.prisma.$executeRaw`
    INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
    VALUES (${a.workspaceId}::uuid, ${connection.id}::uuid, 'person', ${`contact-${marker}`},
            ${ids['entity:person']}::uuid)`;

  await mergeMarker(t, a.workspaceId, connection.id, ids, marker);
  // A's person took part in A's meeting, so its timeline shows A's data.
  await t.prisma.$executeRaw`
    INSERT INTO entity_association (workspace_id, activity_id, activity_type, role, email, party_id, occurred_at)
    VALUES (${a.workspaceId}::uuid, ${ids['entity:meeting']}::uuid, 'meeting', 'attendee', ${`${marker}@acme.example`},
            ${ids['entity:person']}::uuid, '2026-11-20T10:00:00.000Z')`;
  // A's person works at A's company and is on A's deal (as A's CRM says), so their timelines
  // show that meeting too.
  await t.prisma.$executeRaw`
    INSERT INTO entity_relation (key, workspace_id, kind, from_type, from_id, to_type, to_id, connection_id,
                                 from_external_id, to_external_id)
    VALUES (${`${connection.id}|person|contact-${marker}|company|company-${marker}`}, ${a.workspaceId}::uuid, 'crm',
            'person', ${ids['entity:person']}::uuid, 'company', ${ids['entity:company']}::uuid, ${connection.id}::uuid,
            ${`contact-${marker}`}, ${`company-${marker}`}),
           (${`${connection.id}|deal|deal-${marker}|person|contact-${marker}`}, ${a.workspaceId}::uuid, 'crm',
            'deal', ${ids['entity:deal']}::uuid, 'person', ${ids['entity:person']}::uuid, ${connection.id}::uuid,
            ${`deal-${marker}`}, ${`contact-${marker}`})`;

  // A's insights wait for A's connection, so a person's insights name it (and its marker).
  await t.prisma.$executeRaw`
    INSERT INTO insights_state (workspace_id, state, watermark, held_by)
    VALUES (${a.workspaceId}::uuid, '\\x01'::bytea, '2026-11-20T10:00:00.000Z',
            ${JSON.stringify([{ connectionId: connection.id, watermark: '2026-11-20T10:00:00.000Z' }])}::jsonb)`;

  ids.merge_conflict = randomUUID();
  const candidates = [
    {
      value: `${marker} one`,
      source: { kind: 'connection', id: connection.id },
      eventTime: '2026-11-20T10:00:00.000Z',
    },
    { value: `${marker} two`, source: { kind: 'user', id: ids.user }, eventTime: '2026-11-20T10:00:01.000Z' },
  ];
  await t.prisma.$executeRaw`
    INSERT INTO merge_conflict (id, workspace_id, entity_id, field, kind, policy, candidates, status)
    VALUES (${ids.merge_conflict}::uuid, ${a.workspaceId}::uuid, ${ids['entity:company']}::uuid, ${FREE_KEY},
            'concurrent', 'manual', ${JSON.stringify(candidates)}::jsonb, 'open')`;

  const [outbox] = await t.prisma.$queryRaw<{ id: bigint }[]>`
    INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads,
                        idempotency_key, status, attempts, last_error)
    VALUES (${a.workspaceId}::uuid, ${ids['entity:person']}::uuid, 'person', ${connection.id}::uuid, 'update',
            ${JSON.stringify({ [FREE_KEY]: marker })}::jsonb, ARRAY[]::text[], ${`w-${marker}`}, 'failed', 5,
            ${`refused: ${marker}`})
    RETURNING id`;
  const logEvent = {
    partition: 3,
    offset: 7,
    workspaceId: a.workspaceId,
    connectionId: connection.id,
    eventKey: `contact-${marker}:1`,
    entityType: 'person',
    externalId: `contact-${marker}`,
    op: 'upsert',
    fields: { [FREE_KEY]: marker },
    fieldTimes: {},
    eventTime: '2026-11-20T10:00:00.000Z',
    ingestedAt: '2026-11-20T10:00:00.000Z',
    providerVersion: '1',
    origin: null,
  };
  ids['dead_letter:log'] = await insertDeadLetter(
    t.prisma,
    a.workspaceId,
    connection.id,
    'log',
    logEvent,
    marker,
  );
  ids['dead_letter:push'] = await insertDeadLetter(
    t.prisma,
    a.workspaceId,
    connection.id,
    'push',
    {
      outboxIds: [String(outbox?.id)],
    },
    marker,
  );

  ids.possible_duplicate = randomUUID();
  await t.prisma.$executeRaw`
    INSERT INTO possible_duplicate (id, workspace_id, entity_type, entity_a, entity_b, score, evidence)
    VALUES (${ids.possible_duplicate}::uuid, ${a.workspaceId}::uuid, 'person', ${ids['entity:person']}::uuid,
            ${ids['entity:person-duplicate']}::uuid, 0.9, ${JSON.stringify([{ kind: 'name', value: marker }])}::jsonb)`;
  ids.identity_operation = randomUUID();
  // A merge as the sync stage records it (the duplicate is not actually merged: nothing runs here).
  const merge = {
    kind: 'merge',
    operationId: ids.identity_operation,
    workspaceId: a.workspaceId,
    entityType: 'person',
    survivorId: ids['entity:person'],
    absorbedId: ids['entity:person-duplicate'],
    movedLinks: [],
    duplicates: [],
  };
  await t.prisma.$executeRaw`
    INSERT INTO identity_operation (id, workspace_id, kind, payload)
    VALUES (${ids.identity_operation}::uuid, ${a.workspaceId}::uuid, 'merge', ${JSON.stringify(merge)}::jsonb)`;
  await t.prisma.$executeRaw`
    INSERT INTO field_policy (workspace_id, entity_type, field, policy)
    VALUES (${a.workspaceId}::uuid, 'person', ${FREE_KEY}, 'manual')`;
  // A finished replay whose report names A's person (GET /api/v1/replays/{id}); finished, so a new one may start.
  const replay = await t.prisma.replay.create({
    data: {
      workspaceId: a.workspaceId,
      mode: 'preview',
      status: 'succeeded',
      createdBy: adminRow.id,
      eventsTotal: 1,
      eventsReplayed: 1,
      report: {
        summary: { changes: 1 },
        changes: [
          {
            entityId: ids['entity:person'] as string,
            entityType: 'person',
            displayName: `person ${marker}`,
            fields: { [FREE_KEY]: { from: marker, to: `${marker} replayed`, source: null } },
          },
        ],
      },
    },
  });
  ids.replay = replay.id;
  const audit = await t.prisma.auditLog.findMany({ where: { workspaceId: a.workspaceId } });
  for (const [index, row] of audit.entries()) ids[`audit_log:${index}`] = row.id;

  // No sync stage runs here: mark the whole log merged, so an edit is answered at once (200)
  // instead of after the API's 3 s wait (202).
  await t.prisma.$executeRaw`
    INSERT INTO consumer_offset (group_name, partition, committed_offset)
    SELECT ${SYNC_CONSUMER_GROUP}, p, 9000000000000000000 FROM generate_series(0, ${t.config.LOG_PARTITIONS - 1}::int) p
    ON CONFLICT (group_name, partition) DO UPDATE SET committed_offset = EXCLUDED.committed_offset`;

  const prefixes = keys.map((k) => k.prefix);
  return {
    a: {
      workspaceId: a.workspaceId,
      adminKey: a.adminKey,
      salesKey: requireKey(sales.key),
      ids,
      marker,
      secrets: [
        token,
        dryRunPortal.privateAppToken,
        a.adminKey,
        requireKey(sales.key),
        requireKey(spare.key),
      ],
      needles: [
        ...new Set([
          ...Object.values(ids),
          ...prefixes,
          marker,
          portal.externalAccountId,
          dryRunPortal.externalAccountId,
        ]),
      ],
      accounts: [portal.externalAccountId, dryRunPortal.externalAccountId],
    },
    b: { workspaceId: b.workspaceId, adminKey: b.adminKey, salesKey: requireKey(bSales.key) },
  };
}

/** A portal in the HubSpot emulator at `base`, and a private app token of it. */
async function emulatorPortal(
  base: string,
  portalId: number,
): Promise<{ externalAccountId: string; privateAppToken: string }> {
  const post = async (path: string, body: object) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`seeding: POST ${path} answered ${res.status} ${await res.text()}`);
    return (await res.json()) as { accessToken: string };
  };
  await post('/_emulator/hubspot/portals', { portalId, appId: 5001, clientSecret: 'openapi-suite-secret' });
  const app = await post(`/_emulator/hubspot/portals/${portalId}/private-apps`, {});
  return { externalAccountId: String(portalId), privateAppToken: app.accessToken };
}

function requireKey(key: string | undefined): string {
  if (key === undefined) throw new Error('seeding: a created key came back without its secret');
  return key;
}

async function insertEntity(
  prisma: PrismaClient,
  workspaceId: string,
  type: string,
  marker: string,
): Promise<string> {
  const id = randomUUID();
  await prisma.$executeRaw`
    INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, version)
    VALUES (${id}::uuid, ${workspaceId}::uuid, ${type}, ${`${type} ${marker}`},
            ${JSON.stringify({ [FREE_KEY]: marker })}::jsonb, 1)`;
  return id;
}

/**
 * Each record of A merges one change (the marker, from A's connection) a day before the time
 * the generators use (schema-values.ts), so its history and its state as of then show A's data.
 */
async function mergeMarker(
  t: TestApp,
  workspaceId: string,
  connectionId: string,
  ids: Record<string, string>,
  marker: string,
): Promise<void> {
  const pool = new Pool({ connectionString: t.db.url, max: 1 });
  try {
    const engine = new MergeEngine(new PgMergeStore(pool));
    for (const [kind, entityId] of Object.entries(ids)) {
      if (!kind.startsWith('entity:')) continue;
      await engine.applyInbound({
        entityId,
        workspaceId,
        entityType: kind.slice('entity:'.length).replace(/-duplicate$/, ''),
        source: { kind: 'connection', id: connectionId },
        eventKey: `seed:${entityId}`,
        eventTime: new Date('2026-11-19T10:00:00.000Z'),
        fields: { [FREE_KEY]: marker },
      });
    }
  } finally {
    await pool.end();
  }
}

async function insertDeadLetter(
  prisma: PrismaClient,
  workspaceId: string,
  connectionId: string,
  source: 'log' | 'push',
  payload: object,
  marker: string,
): Promise<string> {
  const id = randomUUID();
  await prisma.$executeRaw`
    INSERT INTO dead_letter (id, workspace_id, source, group_name, partition, "offset", connection_id, event_key,
                             payload, error_code, error_message, attempts)
    VALUES (${id}::uuid, ${workspaceId}::uuid, ${source}, ${source === 'log' ? SYNC_CONSUMER_GROUP : null},
            ${source === 'log' ? 3 : null}, ${source === 'log' ? 7 : null}::bigint, ${connectionId}::uuid,
            ${source === 'log' ? `contact-${marker}:1` : null}, ${JSON.stringify(payload)}::jsonb,
            'HandlerFailed', ${`failed: ${marker}`}, 5)`;
  return id;
}

/** Every row of the workspace in every table that has a workspace_id, as JSON text, table by table. */
export async function workspaceRows(
  prisma: PrismaClient,
  workspaceId: string,
): Promise<Record<string, string[]>> {
  const tables = await prisma.$queryRaw<{ table_name: string }[]>`
    SELECT table_name::text FROM information_schema.columns
     WHERE table_schema = current_schema() AND column_name = 'workspace_id' ORDER BY table_name`;
  const rows: Record<string, string[]> = {};
  for (const { table_name: table } of tables) {
    const found = await prisma.$queryRawUnsafe<{ row: string }[]>(
      `SELECT to_jsonb(t)::text AS row FROM "${table.replaceAll('"', '""')}" t WHERE workspace_id = $1::uuid`,
      workspaceId,
    );
    rows[table] = found.map((r) => r.row).sort();
  }
  return rows;
}
