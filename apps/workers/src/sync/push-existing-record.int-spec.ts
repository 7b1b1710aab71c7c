import { randomBytes, randomUUID } from 'node:crypto';
import { hubspotConnector, PgCredentialStore } from '@syncline/connectors';
import { createLogger, inTransaction, Keyring } from '@syncline/core';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import { LOG_EVENT_COLUMNS, type LogEventRow, toLogEvent } from '@syncline/log';
import { createKey, foldWriteEvents } from '@syncline/sync-stage';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { TEST_REDIS_PREFIX, TEST_REDIS_URL } from '../../../../test/support/env';
import { loadWorkersConfig, type WorkersConfig } from '../config/workers-config';
import { ConnectionRuntime } from '../connections/connection-runtime';
import { IngestLog } from '../connections/ingest-log';
import { JOB_MAP } from '../jobs/job-map';
import { JobQueue } from '../jobs/job-queue.service';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { PushService } from './push.service';
import { CREATE_HOLD_ATTEMPTS, setRefusedCreateAside } from './refused-writes';

const APP_ID = 5007;

interface HubspotObject {
  id: string;
  properties: Record<string, string | null>;
}

/**
 * The push stage against the HubSpot emulator, on a test database and Redis: a create HubSpot
 * refuses because one of its records already holds the entity's unique value ("… already exists.
 * Existing ID: …") is settled on that record, never dead-lettered: linked to the entity when a
 * deterministic key agrees and the record is nobody else's, put up for review when it is
 * another entity's. The pusher puts the refusal on the log; the sync stage decides when it
 * folds it (`fold` below folds the connection's write events as the stage does).
 */
describe('writes HubSpot refuses: a create because the record exists, an update as stale (Postgres, Redis, BullMQ, HubSpot emulator)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let redis: Redis;
  let prefix: string;
  let emulators: RunningEmulators;
  let config: WorkersConfig;
  let runtime: ConnectionRuntime;
  let log: IngestLog;
  let queues: Queue[];
  let push: PushService;
  const key = randomBytes(32);
  const keyring = new Keyring({ k1: key }, 'k1');
  let nextPortal = 30_000 + Math.floor(Math.random() * 9_000);

  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${emulators.hubspotUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };

  beforeAll(async () => {
    db = await createTestDatabase('push_existing_record');
    pool = new Pool({ connectionString: db.url, max: 4 });
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    prefix = `${TEST_REDIS_PREFIX}:push-existing-${randomBytes(4).toString('hex')}`;
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    config = loadWorkersConfig({
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'silent',
      SYNCLINE_ENCRYPTION_KEYS: `k1:${key.toString('base64')}`,
      HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
      HUBSPOT_APP_ID: String(APP_ID),
    });
    const logger = createLogger({ level: 'silent' });
    queues = Object.keys(JOB_MAP.queues).map((name) => new Queue(name, { connection: redis, prefix }));
    const jobs = new JobQueue(JOB_MAP, new Map(queues.map((q) => [q.name, q] as const)));
    runtime = new ConnectionRuntime(pool, redis, config, logger);
    log = new IngestLog(pool, config);
    push = new PushService(
      pool,
      runtime,
      jobs,
      config,
      new WorkerMetrics(pool, jobs, JOB_MAP, logger),
      log,
      logger,
    );
  });

  afterAll(async () => {
    try {
      await log?.onApplicationShutdown();
      for (const queue of queues ?? []) await queue.close();
      await emulators?.close();
    } finally {
      if (redis) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
        await redis.quit();
      }
      await pool?.end();
      await db?.drop();
    }
  });

  /** A portal with our app installed, and a live HubSpot connection to it in a new workspace. */
  async function connectPortal(settings: { uniqueProperties?: Record<string, string[]> } = {}) {
    const portalId = nextPortal++;
    const grant = await control<{ accessToken: string }>('POST', '/_emulator/hubspot/portals', {
      portalId,
      appId: APP_ID,
      clientSecret: 'push-existing-record-secret',
      ...settings,
    });
    const workspaceId = randomUUID();
    const connectionId = randomUUID();
    await pool.query('INSERT INTO workspace (id, name) VALUES ($1, $2)', [workspaceId, `ws ${workspaceId}`]);
    await pool.query(
      `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
       VALUES ($1, $2, 'hubspot', $3, 'live')`,
      [connectionId, workspaceId, String(portalId)],
    );
    await new PgCredentialStore(pool, keyring).save(connectionId, { accessToken: grant.accessToken });
    const base = `/_emulator/hubspot/portals/${portalId}`;
    return {
      workspaceId,
      connectionId,
      /** A record someone made in HubSpot's UI. */
      uiCreate: (type: string, properties: Record<string, string>) =>
        control<HubspotObject>('POST', `${base}/ui/${type}`, { properties }),
      /** A record edited in HubSpot's UI. */
      uiUpdate: (type: string, id: string, properties: Record<string, string>) =>
        control<HubspotObject>('PATCH', `${base}/ui/${type}/${id}`, { properties }),
      objects: async (type: string) =>
        (await control<{ results: HubspotObject[] }>('GET', `${base}/objects/${type}`)).results,
      /** Writes HubSpot received (reads left out). */
      writes: async () =>
        (
          await control<{ method: string; path: string }[]>(
            'GET',
            `/_emulator/requests?service=hubspot&account=${portalId}`,
          )
        )
          .map((r) => `${r.method} ${r.path.split('?')[0]}`)
          .filter((r) => !r.startsWith('GET ') && !r.endsWith('/batch/read')),
    };
  }

  /**
   * An entity with its create owed to the connection, as the sync stage queues it. `recreate`:
   * HubSpot merged the entity's own record away at our asking and Syncline unmerged it since
   * (PushWrite.afterProviderMerge: the address is freed from the contact it went into first).
   */
  async function owedCreate(
    at: { workspaceId: string; connectionId: string },
    entityType: 'person' | 'company',
    fields: Record<string, unknown>,
    options: { recreate?: boolean } = {},
  ): Promise<string> {
    const entityId = randomUUID();
    await pool.query(
      `INSERT INTO entity (id, workspace_id, entity_type, fields, heads, flags) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        entityId,
        at.workspaceId,
        entityType,
        fields,
        ['h1'],
        options.recreate ? { recreateIn: [at.connectionId] } : {},
      ],
    );
    await pool.query(
      `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, fields, heads, idempotency_key)
       VALUES ($1, $2, $3, $4, 'create', $5, $6, $7)`,
      [
        at.workspaceId,
        entityId,
        entityType,
        at.connectionId,
        fields,
        ['h1'],
        createKey(entityId, at.connectionId),
      ],
    );
    return entityId;
  }

  /** Another entity, linked to `externalId` in the connection (the sync stage merged its report). */
  async function linkedEntity(
    at: { workspaceId: string; connectionId: string },
    entityType: 'person' | 'company',
    externalId: string,
    fields: Record<string, unknown>,
  ): Promise<string> {
    const entityId = randomUUID();
    await pool.query(
      'INSERT INTO entity (id, workspace_id, entity_type, fields, heads) VALUES ($1, $2, $3, $4, $5)',
      [entityId, at.workspaceId, entityType, fields, ['h0']],
    );
    await pool.query(
      `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
       VALUES ($1, $2, $3, $4, $5)`,
      [at.workspaceId, at.connectionId, entityType, externalId, entityId],
    );
    return entityId;
  }

  const linksOf = async (connectionId: string) =>
    (
      await pool.query<{ external_id: string; entity_id: string; link_reason: unknown }>(
        `SELECT external_id, entity_id::text, link_reason FROM source_link WHERE connection_id = $1
          ORDER BY external_id`,
        [connectionId],
      )
    ).rows;
  const outboxOf = async (connectionId: string) =>
    (
      await pool.query<{ status: string; last_error: string | null }>(
        'SELECT status, last_error FROM outbox WHERE connection_id = $1 ORDER BY id',
        [connectionId],
      )
    ).rows;
  const deadLetters = async (connectionId: string) =>
    (
      await pool.query<{ error_message: string }>(
        'SELECT error_message FROM dead_letter WHERE connection_id = $1',
        [connectionId],
      )
    ).rows;
  // The records' own changes (our writes' receipts are on the log too, see receiptEvents).
  const logged = async (connectionId: string) =>
    (
      await pool.query<{ external_id: string; event_key: string }>(
        `SELECT external_id, event_key FROM change_event WHERE connection_id = $1 AND op = 'upsert'`,
        [connectionId],
      )
    ).rows;
  const receiptEvents = async (connectionId: string) =>
    (
      await pool.query<{ external_id: string; entity_id: string }>(
        `SELECT external_id, fields->'write'->>'entityId' AS entity_id FROM change_event
          WHERE connection_id = $1 AND op = 'receipt'`,
        [connectionId],
      )
    ).rows;
  const duplicates = async (workspaceId: string) =>
    (
      await pool.query<{ entity_a: string; entity_b: string; evidence: string[]; status: string }>(
        `SELECT entity_a::text, entity_b::text, evidence, status::text FROM possible_duplicate
          WHERE workspace_id = $1`,
        [workspaceId],
      )
    ).rows;

  /** The connection's write events (claims, receipts, refusals) folded in log order, as the sync stage folds them. */
  const fold = async (connectionId: string) => {
    const { rows } = await pool.query<LogEventRow>(
      `SELECT ${LOG_EVENT_COLUMNS} FROM change_event
        WHERE connection_id = $1 AND op IN ('claim', 'receipt', 'existing', 'version') ORDER BY partition, "offset"`,
      [connectionId],
    );
    return inTransaction(pool, (client) => foldWriteEvents(client, rows.map(toLogEvent)));
  };

  it('links the contact that holds the same address (linked nowhere yet): no dead letter, no second contact', async () => {
    const portal = await connectPortal();
    const existing = await portal.uiCreate('contacts', {
      email: 'ada@analytical.example',
      firstname: 'Ada',
      jobtitle: 'Analyst',
    });
    const entityId = await owedCreate(portal, 'person', {
      email: 'Ada@Analytical.example',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });

    const outcome = await push.push(portal.connectionId);

    expect(outcome).toMatchObject({ sent: 0, existing: 1, failed: 0 });
    // Set aside until the sync stage settles it: nothing is linked by the pusher.
    expect(await outboxOf(portal.connectionId)).toEqual([
      { status: 'superseded', last_error: expect.stringMatching(/the sync stage settles it on record/) },
    ]);
    expect(await linksOf(portal.connectionId)).toEqual([]);
    await fold(portal.connectionId);
    expect(await deadLetters(portal.connectionId)).toEqual([]);
    expect(await linksOf(portal.connectionId)).toEqual([
      {
        external_id: existing.id,
        entity_id: entityId,
        link_reason: {
          rule: 'provider-existing-record',
          evidence: ['email:ada@analytical.example'],
          score: 1,
        },
      },
    ]);
    expect(await outboxOf(portal.connectionId)).toEqual([
      { status: 'sent', last_error: expect.stringMatching(/Existing ID: \d+.*linked to that record/) },
    ]);
    // A pusher's set-aside that comes after the fold changes nothing: the decision stands.
    const { rows: ids } = await pool.query<{ id: string }>(
      'SELECT id::text FROM outbox WHERE connection_id = $1',
      [portal.connectionId],
    );
    await setRefusedCreateAside(pool, { rowIds: ids.map((r) => r.id) }, 'late');
    expect((await outboxOf(portal.connectionId)).map((r) => r.status)).toEqual(['sent']);
    // One contact, as its owner left it: nothing was written to it, and no receipt claims so.
    const contacts = await portal.objects('contacts');
    expect(contacts.map((c) => c.id)).toEqual([existing.id]);
    expect(contacts[0]?.properties).toMatchObject({ jobtitle: 'Analyst' });
    expect(contacts[0]?.properties.lastname ?? null).toBeNull();
    expect(await portal.writes()).toEqual(['POST /crm/v3/objects/contacts/batch/upsert']);
    expect(await receiptEvents(portal.connectionId)).toEqual([]);
    // Its own values are on the log, to be merged into the entity as that contact's.
    expect(await logged(portal.connectionId)).toEqual([
      {
        external_id: existing.id,
        event_key: expect.stringMatching(new RegExp(`^contacts:${existing.id}:\\d+$`)),
      },
    ]);
    expect(await duplicates(portal.workspaceId)).toEqual([]);
  });

  it('settles a refused create among others of one batch on its record; the others are made once', async () => {
    const portal = await connectPortal();
    const existing = await portal.uiCreate('contacts', { email: 'ada@analytical.example' });
    const refused = await owedCreate(portal, 'person', { email: 'ada@analytical.example' });
    // Every create is keyed on our id: one call with the refused one, applied while it is refused.
    const others = [
      await owedCreate(portal, 'person', { email: 'grace@navy.example', firstName: 'Grace' }),
      await owedCreate(portal, 'person', { email: 'alan@bletchley.example', firstName: 'Alan' }),
    ];

    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 2, existing: 1, failed: 0 });
    await fold(portal.connectionId);

    expect(await deadLetters(portal.connectionId)).toEqual([]);
    const contacts = await portal.objects('contacts');
    expect(contacts.map((c) => c.properties.email).sort()).toEqual([
      'ada@analytical.example',
      'alan@bletchley.example',
      'grace@navy.example',
    ]);
    const links = new Map((await linksOf(portal.connectionId)).map((l) => [l.entity_id, l.external_id]));
    expect(links.get(refused)).toBe(existing.id);
    // The records the others' creates made are named by their receipts on the log, which the
    // sync stage folds into their links.
    const made = new Map((await receiptEvents(portal.connectionId)).map((r) => [r.entity_id, r.external_id]));
    expect(made.has(refused)).toBe(false);
    expect(others.map((id) => contacts.find((c) => c.id === made.get(id))?.properties.firstname)).toEqual([
      'Grace',
      'Alan',
    ]);
    expect((await outboxOf(portal.connectionId)).map((r) => r.status)).toEqual(['sent', 'sent', 'sent']);
  });

  it('puts the two entities up for review when the contact holding the address is another entity’s: a create never writes over it', async () => {
    const portal = await connectPortal();
    const holder = await portal.uiCreate('contacts', { email: 'ada@analytical.example', firstname: 'Ada' });
    const other = await linkedEntity(portal, 'person', holder.id, { email: 'ada@analytical.example' });
    const entityId = await owedCreate(portal, 'person', {
      email: 'ada@analytical.example',
      firstName: 'Ada',
      lastName: 'Byron',
    });

    const outcome = await push.push(portal.connectionId);

    expect(outcome).toMatchObject({ sent: 0, failed: 0, existing: 1 });
    expect(await duplicates(portal.workspaceId)).toEqual([]);
    await fold(portal.connectionId);
    expect(await deadLetters(portal.connectionId)).toEqual([]);
    expect(await duplicates(portal.workspaceId)).toEqual([
      {
        entity_a: entityId,
        entity_b: other,
        evidence: ['provider-refused-create', 'email:ada@analytical.example'],
        status: 'open',
      },
    ]);
    // Not linked: the contact stays the other entity's, and the create is settled with the reason.
    expect((await linksOf(portal.connectionId)).map((l) => [l.external_id, l.entity_id])).toEqual([
      [holder.id, other],
    ]);
    expect(await outboxOf(portal.connectionId)).toEqual([
      {
        status: 'superseded',
        last_error: expect.stringMatching(
          new RegExp(`Existing ID: ${holder.id}.*entity ${other}: put up for review`),
        ),
      },
    ]);
    // Its owner's values, as they were: nothing of the create was written to it.
    const contacts = await portal.objects('contacts');
    expect(
      contacts.map((c) => [c.id, c.properties.lastname ?? null, c.properties.syncline_id ?? null]),
    ).toEqual([[holder.id, null, null]]);
  });

  it('holds a create while the contact with its address is another person’s who has another address now, and makes it once the contact gives the address up', async () => {
    const portal = await connectPortal();
    // The contact still holds an address its person no longer has (an unmerge gave each person
    // back their own; the write taking it off this contact is still owed).
    const holder = await portal.uiCreate('contacts', {
      email: 'ada@analytical.example',
      firstname: 'Augusta',
    });
    await linkedEntity(portal, 'person', holder.id, { email: 'augusta@byron.example' });
    const entityId = await owedCreate(portal, 'person', {
      email: 'ada@analytical.example',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });

    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 0, failed: 0, existing: 0 });
    // Waiting, neither settled nor put up for review: nothing on the log about it.
    await fold(portal.connectionId);
    expect(await duplicates(portal.workspaceId)).toEqual([]);
    expect(await outboxOf(portal.connectionId)).toEqual([
      { status: 'pending', last_error: expect.stringMatching(/the create waits/) },
    ]);
    expect((await logged(portal.connectionId)).map((e) => e.external_id)).not.toContain(holder.id);

    // The contact gives the address up; the create's next claim (a second after the refusal) makes it.
    await portal.uiUpdate('contacts', holder.id, { email: 'augusta@byron.example' });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 1, failed: 0, existing: 0 });
    const contacts = await portal.objects('contacts');
    expect(contacts.map((c) => [c.properties.email, c.properties.syncline_id ?? null]).sort()).toEqual([
      ['ada@analytical.example', entityId],
      ['augusta@byron.example', null],
    ]);
    expect(await duplicates(portal.workspaceId)).toEqual([]);
  });

  it('gives up holding after a few attempts: the pair goes up for review', async () => {
    const portal = await connectPortal();
    const holder = await portal.uiCreate('contacts', { email: 'grace@navy.example', firstname: 'Amazing' });
    const other = await linkedEntity(portal, 'person', holder.id, { email: 'amazing@grace.example' });
    const entityId = await owedCreate(portal, 'person', { email: 'grace@navy.example', lastName: 'Hopper' });
    // As if it had waited its turns already.
    await pool.query('UPDATE outbox SET attempts = $2 WHERE connection_id = $1', [
      portal.connectionId,
      CREATE_HOLD_ATTEMPTS - 1,
    ]);
    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 0, existing: 1 });
    await fold(portal.connectionId);
    expect((await duplicates(portal.workspaceId)).map((d) => [d.entity_a, d.entity_b])).toEqual([
      [entityId, other],
    ]);
  });

  it('links a company whose domain the portal holds unique, by that domain', async () => {
    const portal = await connectPortal({ uniqueProperties: { companies: ['domain'] } });
    const existing = await portal.uiCreate('companies', { name: 'Acme Ltd', domain: 'acme.example' });
    const entityId = await owedCreate(portal, 'company', { name: 'Acme', domain: 'acme.example' });

    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 0, existing: 1, failed: 0 });
    await fold(portal.connectionId);

    expect(await deadLetters(portal.connectionId)).toEqual([]);
    expect(await linksOf(portal.connectionId)).toEqual([
      {
        external_id: existing.id,
        entity_id: entityId,
        link_reason: { rule: 'provider-existing-record', evidence: ['domain:acme.example'], score: 1 },
      },
    ]);
    expect((await portal.objects('companies')).map((c) => c.id)).toEqual([existing.id]);
  });

  it('a create sent again finds the contact its earlier attempt made (its answer lost) by our id, under another address', async () => {
    const portal = await connectPortal();
    const entityId = await owedCreate(portal, 'person', { email: 'ada@new.example', firstName: 'Ada' });
    // The first attempt made the contact under the entity's address then; its answer never came back.
    const handle = await runtime.open(portal.connectionId);
    const first = await hubspotConnector.push(handle!.ctx, [
      {
        op: 'create',
        entityType: 'person',
        fields: { email: 'ada@old.example', firstName: 'Ada' },
        idempotencyKey: createKey(entityId, portal.connectionId),
        entityId,
      },
    ]);
    if (!first.ok) throw new Error(first.error.message);
    const made = first.value[0]!.externalId;

    // The create is an upsert on our id: it lands on that contact, with the entity's values.
    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 1, existing: 0, failed: 0 });
    await fold(portal.connectionId);

    expect(await deadLetters(portal.connectionId)).toEqual([]);
    expect((await linksOf(portal.connectionId)).map((l) => [l.external_id, l.entity_id])).toEqual([
      [made, entityId],
    ]);
    const contacts = await portal.objects('contacts');
    expect(contacts.map((c) => [c.id, c.properties.email])).toEqual([[made, 'ada@new.example']]);
  });

  it('leaves a record linked nowhere whose keys do not agree to identity: settled, its change on the log', async () => {
    const portal = await connectPortal({ uniqueProperties: { companies: ['domain'] } });
    // The portal holds the domain under a record our rules read another way: no shared key.
    const existing = await portal.uiCreate('companies', { name: 'Initech', domain: 'initech' });
    await owedCreate(portal, 'company', { name: 'Initech', domain: 'initech' });

    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 0, failed: 0, existing: 1 });
    await fold(portal.connectionId);

    expect(await deadLetters(portal.connectionId)).toEqual([]);
    expect(await linksOf(portal.connectionId)).toEqual([]);
    expect(await outboxOf(portal.connectionId)).toEqual([
      {
        status: 'superseded',
        last_error: expect.stringMatching(/linked nowhere, no key agrees: left to identity/),
      },
    ]);
    expect((await logged(portal.connectionId)).map((e) => e.external_id)).toEqual([existing.id]);
  });

  it('a write refused as stale puts the record as the provider holds it on the log, and its version once the log has it', async () => {
    const portal = await connectPortal();
    const contact = await portal.uiCreate('contacts', { email: 'hedy@lamarr.example', jobtitle: 'Inventor' });
    const entityId = await linkedEntity(portal, 'person', contact.id, { email: 'hedy@lamarr.example' });
    await pool.query('UPDATE source_link SET provider_version = $2 WHERE connection_id = $1', [
      portal.connectionId,
      '2020-01-01T00:00:00.000Z',
    ]);
    await pool.query(
      `INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, heads,
                           idempotency_key)
       VALUES ($1, $2, 'person', $3, 'update', $4, $5, $6, 'stale-update')`,
      [portal.workspaceId, entityId, portal.connectionId, contact.id, { jobTitle: 'Actress' }, ['h0']],
    );
    const eventsOf = async (op: string) =>
      (
        await pool.query<{ external_id: string; provider_version: string | null; event_key: string }>(
          `SELECT external_id, provider_version, event_key FROM change_event WHERE connection_id = $1 AND op = $2
            ORDER BY "offset"`,
          [portal.connectionId, op],
        )
      ).rows;

    // Refused: the contact as HubSpot holds it goes on the log, as a pull would put it there.
    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 0, dropped: 1 });
    const reported = await eventsOf('upsert');
    expect(reported.map((e) => e.external_id)).toEqual([contact.id]);
    expect(await eventsOf('version')).toEqual([]);

    // Refused again at the same version: the report is on the log already, so its version follows it.
    await pool.query(`UPDATE outbox SET status = 'pending', claimed_at = NULL WHERE connection_id = $1`, [
      portal.connectionId,
    ]);
    expect(await push.push(portal.connectionId)).toMatchObject({ sent: 0, dropped: 1 });
    expect(await eventsOf('upsert')).toEqual(reported);
    const versions = await eventsOf('version');
    expect(versions).toEqual([
      {
        external_id: contact.id,
        provider_version: reported[0]!.provider_version,
        event_key: expect.any(String),
      },
    ]);
    // Folded, it is the link's version; nothing in HubSpot was written.
    await fold(portal.connectionId);
    const { rows } = await pool.query<{ provider_version: string }>(
      'SELECT provider_version FROM source_link WHERE connection_id = $1',
      [portal.connectionId],
    );
    expect(rows.map((r) => r.provider_version)).toEqual([reported[0]!.provider_version]);
    expect(await portal.writes()).toEqual([]);
  });
});
