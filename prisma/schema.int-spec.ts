import { createPrismaClient, type Prisma, type PrismaClient } from '@syncline/core/db';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/database';
import { EXPRESSION_INDEXES } from './test-support/expression-indexes';
import {
  columnOf,
  columnsOf,
  type DbForeignKey,
  type DbIndex,
  enumTypeOf,
  expectedColumnDefault,
  expectedColumnType,
  prismaDefaultName,
  readDatabase,
  readDatamodel,
  scalarFields,
  tableOf,
} from './test-support/schema-introspection';

// schema.prisma is the source of the generated client; the hand-written migrations are what
// databases get. This proves the two describe the same database, so neither drifts.

const datamodel = readDatamodel();
const modelByName = new Map(datamodel.models.map((m) => [m.name, m]));

type Actual = Awaited<ReturnType<typeof readDatabase>>;

describe('schema.prisma and prisma/migrations agree', () => {
  let db: TestDatabase;
  let client: Client;
  let actual: Actual;

  beforeAll(async () => {
    db = await createTestDatabase('schema');
    client = new Client({ connectionString: db.url });
    await client.connect();
    actual = await readDatabase(client);
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('has a table for every model, and no other tables but _prisma_migrations', () => {
    const expected = [...datamodel.models.map(tableOf), '_prisma_migrations'].sort();
    expect(actual.tables).toEqual(expected);
  });

  it('has every enum with the same values in the same order, and no other enum types', () => {
    const expected = new Map(
      datamodel.enums.map((e) => [enumTypeOf(e), e.values.map((v) => v.dbName ?? v.name)]),
    );
    expect(actual.enums).toEqual(expected);
  });

  it.each(datamodel.models.map((m) => [m.name, m] as const))(
    '%s: a column per scalar field with its type, nullability and default',
    (_name, model) => {
      const table = tableOf(model);
      const expected = Object.fromEntries(
        scalarFields(model).map((field) => {
          const { type, precision } = expectedColumnType(field, datamodel.enums);
          const columnDefault = expectedColumnDefault(field, datamodel.enums);
          return [
            columnOf(field),
            {
              type,
              precision: precision ?? null,
              nullable: !field.isRequired,
              ...(columnDefault === undefined ? {} : { default: columnDefault }),
            },
          ];
        }),
      );
      const found = Object.fromEntries(
        actual.columns
          .filter((c) => c.table === table)
          .map((c) => {
            const wanted = expected[c.column];
            const shape = { type: c.type, precision: c.precision, nullable: c.nullable };
            // Only compare the default where the schema side could predict it.
            return [c.column, wanted && 'default' in wanted ? { ...shape, default: c.default } : shape];
          }),
      );
      expect(found).toEqual(expected);
    },
  );

  it('has every @id, @unique, @@unique and @@index with the same columns in order, under Prisma’s names', () => {
    const expected = datamodel.indexes.map((index) => {
      const model = modelByName.get(index.model)!;
      const table = tableOf(model);
      const columns = columnsOf(
        model,
        index.fields.map((f) => f.name),
      );
      return {
        table,
        name: index.dbName ?? prismaDefaultName(table, columns, index.type),
        columns,
        unique: index.type !== 'normal' && index.type !== 'fulltext',
        primary: index.type === 'id',
      } satisfies DbIndex;
    });
    const isExpression = (i: DbIndex) =>
      EXPRESSION_INDEXES.some((e) => e.table === i.table && e.name === i.name);
    const found = actual.indexes.filter((i) => i.table !== '_prisma_migrations' && !isExpression(i));

    // By columns first, so a wrong name and a missing index read differently.
    const byColumns = (i: DbIndex) =>
      `${i.table}(${i.columns.join(',')}) unique=${i.unique} primary=${i.primary}`;
    expect(found.map(byColumns).sort()).toEqual(expected.map(byColumns).sort());
    const sortKey = (i: DbIndex) => `${i.table}:${i.name}`;
    expect([...found].sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).toEqual(
      [...expected].sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
    );
  });

  it('has every expression index the migrations promise (schema.prisma cannot declare them)', () => {
    const names = actual.indexes.map((i) => `${i.table}:${i.name}`);
    expect(names).toEqual(expect.arrayContaining(EXPRESSION_INDEXES.map((e) => `${e.table}:${e.name}`)));
  });

  it('has a foreign key for every relation, with its actions, and no others', () => {
    const expected: DbForeignKey[] = [];
    for (const model of datamodel.models) {
      for (const field of model.fields) {
        if (field.kind !== 'object' || !field.relationFromFields?.length) continue;
        const target = modelByName.get(field.type)!;
        const table = tableOf(model);
        const columns = columnsOf(model, field.relationFromFields);
        const required = field.relationFromFields.every(
          (f) => model.fields.find((x) => x.name === f)?.isRequired,
        );
        expected.push({
          table,
          name: prismaDefaultName(table, columns, 'fk'),
          columns,
          refTable: tableOf(target),
          refColumns: columnsOf(target, field.relationToFields ?? []),
          // Prisma's defaults when the schema names no action.
          onDelete: field.relationOnDelete ?? (required ? 'Restrict' : 'SetNull'),
          onUpdate: field.relationOnUpdate ?? 'Cascade',
        });
      }
    }
    const sortKey = (fk: DbForeignKey) => `${fk.table}:${fk.name}`;
    expect([...actual.foreignKeys].sort((a, b) => sortKey(a).localeCompare(sortKey(b)))).toEqual(
      expected.sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
    );
  });
});

// One create-then-read per model through the generated client on the migrated database:
// the client's idea of every column (names, types, enum values, defaults) meets the real one.
type RoundTrip = (prisma: PrismaClient) => Promise<void>;

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
// Past 2^53, so a lossy number conversion anywhere would show.
const BIG = 9_007_199_254_740_993n;
const AT = new Date('2026-11-29T10:11:12.345Z');

let seq = 0;
const unique = (label: string) => `${label}-${++seq}`;

async function seedWorkspace(prisma: PrismaClient) {
  return prisma.workspace.create({ data: { name: unique('ws') } });
}

async function seedConnection(prisma: PrismaClient) {
  const workspace = await seedWorkspace(prisma);
  const connection = await prisma.connection.create({
    data: { workspaceId: workspace.id, provider: 'hubspot', externalAccountId: unique('portal') },
  });
  return { workspace, connection };
}

const ROUND_TRIPS = {
  Workspace: async (prisma) => {
    const created = await prisma.workspace.create({ data: { name: 'Acme' } });
    expect(created.id).toMatch(UUID_V7);
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(await prisma.workspace.findUniqueOrThrow({ where: { id: created.id } })).toEqual(created);
  },

  Member: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.member.create({
      data: {
        workspaceId: workspace.id,
        email: 'ana@example.com',
        name: 'Ana',
        role: 'sales',
        status: 'invited',
        lastSignInAt: AT,
        removedAt: AT,
      },
    });
    const read = await prisma.member.findUniqueOrThrow({
      where: { workspaceId_email: { workspaceId: workspace.id, email: 'ana@example.com' } },
    });
    expect(read).toEqual(created);
    expect(read).toMatchObject({ name: 'Ana', role: 'sales', status: 'invited' });
    // Emails are kept lowercased, by the database too.
    await expect(
      prisma.member.create({ data: { workspaceId: workspace.id, email: 'Bo@example.com', role: 'sales' } }),
    ).rejects.toThrow();
  },

  UserSession: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const member = await prisma.member.create({
      data: { workspaceId: workspace.id, email: 's@example.com', role: 'admin' },
    });
    const created = await prisma.userSession.create({
      data: {
        workspaceId: workspace.id,
        memberId: member.id,
        tokenHash: new Uint8Array([0, 1, 255]),
        csrfSecret: 'secret',
        expiresAt: AT,
        revokedAt: AT,
      },
    });
    expect(created.id).toMatch(UUID_V7);
    const read = await prisma.userSession.findUniqueOrThrow({
      where: { tokenHash: new Uint8Array([0, 1, 255]) },
    });
    expect(read).toEqual(created);
    expect(read.lastSeenAt).toBeInstanceOf(Date);
  },

  MagicLink: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const member = await prisma.member.create({
      data: { workspaceId: workspace.id, email: 'm@example.com', role: 'sales' },
    });
    const created = await prisma.magicLink.create({
      data: {
        workspaceId: workspace.id,
        memberId: member.id,
        tokenHash: new Uint8Array([9, 8, 7]),
        email: 'm@example.com',
        returnTo: '/people',
        expiresAt: AT,
        usedAt: AT,
      },
    });
    const read = await prisma.magicLink.findUniqueOrThrow({
      where: { tokenHash: new Uint8Array([9, 8, 7]) },
    });
    expect(read).toEqual(created);
  },

  ApiKey: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const user = await prisma.member.create({
      data: { workspaceId: workspace.id, email: 'k@example.com', role: 'admin' },
    });
    const created = await prisma.apiKey.create({
      data: {
        workspaceId: workspace.id,
        userId: user.id,
        name: 'ci',
        prefix: unique('sk_live'),
        secretHash: new Uint8Array([0, 1, 2, 253, 254, 255]),
        role: 'admin',
        lastUsedAt: AT,
        revokedAt: AT,
      },
    });
    const read = await prisma.apiKey.findUniqueOrThrow({ where: { prefix: created.prefix } });
    expect(read).toEqual(created);
    expect([...read.secretHash]).toEqual([0, 1, 2, 253, 254, 255]);
    expect(read.lastUsedAt?.toISOString()).toBe(AT.toISOString());
  },

  Connection: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.connection.create({
      data: {
        workspaceId: workspace.id,
        provider: 'google_calendar',
        externalAccountId: 'ana@example.com',
        displayName: 'Ana’s calendar',
        status: 'needs_reauth',
        statusReason: 'token revoked',
        credentialsCiphertext: new Uint8Array([9, 8, 7]),
        credentialsKeyId: 'k1',
        cursors: { calendar: { syncToken: 'abc', nested: [1, 'two', null] } },
        watermark: AT,
      },
    });
    const read = await prisma.connection.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read.cursors).toEqual({ calendar: { syncToken: 'abc', nested: [1, 'two', null] } });
    // The enum's mapped value is what the database stores (and what the webhook route uses).
    const raw = await prisma.$queryRaw<{ provider: string }[]>`
      SELECT provider::text AS provider FROM connection WHERE id = ${created.id}::uuid`;
    expect(raw).toEqual([{ provider: 'google-calendar' }]);
  },

  LogPartition: async (prisma) => {
    const created = await prisma.logPartition.create({ data: { partition: 7 } });
    expect(created.nextOffset).toBe(1n);
    await prisma.logPartition.update({ where: { partition: 7 }, data: { nextOffset: BIG } });
    expect(await prisma.logPartition.findUniqueOrThrow({ where: { partition: 7 } })).toEqual({
      partition: 7,
      nextOffset: BIG,
    });
  },

  ChangeEvent: async (prisma) => {
    const { workspace, connection } = await seedConnection(prisma);
    const created = await prisma.changeEvent.create({
      data: {
        partition: 3,
        offset: BIG,
        workspaceId: workspace.id,
        connectionId: connection.id,
        eventKey: 'contact-1:42',
        entityType: 'person',
        externalId: 'contact-1',
        op: 'upsert',
        fields: { email: 'ana@example.com', phones: ['+4930123'] },
        fieldTimes: { email: AT.toISOString() },
        eventTime: AT,
        providerVersion: '42',
        origin: { changeSource: 'CRM_UI' },
      },
    });
    const read = await prisma.changeEvent.findUniqueOrThrow({
      where: { partition_offset: { partition: 3, offset: BIG } },
    });
    expect(read).toEqual(created);
    expect(read.offset).toBe(BIG);
    expect(read.eventTime.toISOString()).toBe(AT.toISOString());
  },

  ConsumerOffset: async (prisma) => {
    const created = await prisma.consumerOffset.create({ data: { groupName: 'merge', partition: 3 } });
    expect(created.committedOffset).toBe(0n);
    await prisma.consumerOffset.update({
      where: { groupName_partition: { groupName: 'merge', partition: 3 } },
      data: { committedOffset: BIG },
    });
    const read = await prisma.consumerOffset.findUniqueOrThrow({
      where: { groupName_partition: { groupName: 'merge', partition: 3 } },
    });
    expect(read).toMatchObject({ groupName: 'merge', partition: 3, committedOffset: BIG });
  },

  ConsumerBatch: async (prisma) => {
    const created = await prisma.consumerBatch.create({
      data: { groupName: 'merge', seq: BIG, partition: 2, sinceOffset: 10n, lastOffset: BIG },
    });
    expect(created.committedAt).toBeInstanceOf(Date);
    const read = await prisma.consumerBatch.findUniqueOrThrow({
      where: { groupName_seq_partition: { groupName: 'merge', seq: BIG, partition: 2 } },
    });
    expect(read).toMatchObject({ sinceOffset: 10n, lastOffset: BIG });
  },

  DeadLetter: async (prisma) => {
    const { workspace, connection } = await seedConnection(prisma);
    const created = await prisma.deadLetter.create({
      data: {
        workspaceId: workspace.id,
        source: 'log',
        groupName: 'merge',
        partition: 3,
        offset: BIG,
        connectionId: connection.id,
        eventKey: 'contact-1:42',
        payload: { fields: { email: 'x' } },
        errorCode: 'Validation',
        errorMessage: 'email is not an email',
        attempts: 5,
        status: 'retried',
        resolvedAt: AT,
      },
    });
    expect(created.id).toMatch(UUID_V7);
    const read = await prisma.deadLetter.findUniqueOrThrow({
      where: {
        source_groupName_partition_offset: { source: 'log', groupName: 'merge', partition: 3, offset: BIG },
      },
    });
    expect(read).toEqual(created);
  },
  // ── identity round trips ──
  Entity: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const survivor = await prisma.entity.create({
      data: { workspaceId: workspace.id, entityType: 'person' },
    });
    expect(survivor.id).toMatch(UUID_V7);
    expect(survivor.matchKeys).toEqual({});
    const created = await prisma.entity.create({
      data: {
        workspaceId: workspace.id,
        entityType: 'person',
        displayName: 'Ana Lima',
        matchKeys: { names: ['ana lima'], blocks: ['name:ana|li'] },
        mergedIntoId: survivor.id,
      },
    });
    const read = await prisma.entity.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read.matchKeys).toEqual({ names: ['ana lima'], blocks: ['name:ana|li'] });
  },

  SourceLink: async (prisma) => {
    const { workspace, connection } = await seedConnection(prisma);
    const entity = await prisma.entity.create({ data: { workspaceId: workspace.id, entityType: 'person' } });
    const created = await prisma.sourceLink.create({
      data: {
        workspaceId: workspace.id,
        connectionId: connection.id,
        entityType: 'person',
        externalId: 'contact-1',
        entityId: entity.id,
      },
    });
    const read = await prisma.sourceLink.findUniqueOrThrow({
      where: {
        connectionId_entityType_externalId: {
          connectionId: connection.id,
          entityType: 'person',
          externalId: 'contact-1',
        },
      },
    });
    expect(read).toEqual(created);
  },

  MatchKey: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const entity = await prisma.entity.create({ data: { workspaceId: workspace.id, entityType: 'person' } });
    const key = {
      workspaceId: workspace.id,
      entityType: 'person',
      kind: 'email',
      value: 'ana@example.com',
      entityId: entity.id,
    };
    const created = await prisma.matchKey.create({ data: key });
    const read = await prisma.matchKey.findUniqueOrThrow({
      where: { workspaceId_entityType_kind_value_entityId: key },
    });
    expect(read).toEqual(created);
  },

  PossibleDuplicate: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const a = await prisma.entity.create({ data: { workspaceId: workspace.id, entityType: 'person' } });
    const b = await prisma.entity.create({ data: { workspaceId: workspace.id, entityType: 'person' } });
    const created = await prisma.possibleDuplicate.create({
      data: {
        workspaceId: workspace.id,
        entityType: 'person',
        entityAId: a.id,
        entityBId: b.id,
        score: 0.8125,
        evidence: ['name-similarity:0.963'],
        status: 'dismissed',
      },
    });
    expect(created.id).toMatch(UUID_V7);
    const read = await prisma.possibleDuplicate.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read.score).toBe(0.8125);
  },

  IdentityOperation: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.identityOperation.create({
      data: {
        workspaceId: workspace.id,
        kind: 'unmerge',
        payload: { undoes: 'op-1', links: [{ connectionId: 'c', externalId: 'x' }] },
        undoneAt: AT,
      },
    });
    const read = await prisma.identityOperation.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read.undoneAt?.toISOString()).toBe(AT.toISOString());
  },
  // ── end identity round trips ──

  // ── conflicts round trips ──
  EntityDoc: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.entityDoc.create({
      data: {
        entityId: '0190a000-0000-7000-8000-0000000000d1',
        workspaceId: workspace.id,
        doc: new Uint8Array([0x85, 0x6f, 0x4a, 0x83, 0, 255]),
        docBytes: 6,
        compactedSeq: BIG,
      },
    });
    const read = await prisma.entityDoc.findUniqueOrThrow({ where: { entityId: created.entityId } });
    expect(read).toEqual(created);
    expect([...read.doc]).toEqual([0x85, 0x6f, 0x4a, 0x83, 0, 255]);
    expect(read.compactedSeq).toBe(BIG);
  },

  EntityDocChange: async (prisma) => {
    const entityId = '0190a000-0000-7000-8000-0000000000d2';
    const created = await prisma.entityDocChange.create({
      data: { entityId, seq: BIG, chunk: new Uint8Array([1, 2, 3]) },
    });
    const read = await prisma.entityDocChange.findUniqueOrThrow({
      where: { entityId_seq: { entityId, seq: BIG } },
    });
    expect(read).toEqual(created);
  },

  EntitySyncedHeads: async (prisma) => {
    const { connection } = await seedConnection(prisma);
    const entityId = '0190a000-0000-7000-8000-0000000000d3';
    const created = await prisma.entitySyncedHeads.create({
      data: {
        entityId,
        connectionId: connection.id,
        heads: ['ab'.repeat(32), 'cd'.repeat(32)],
        stale: { stage: '"Lost"' },
      },
    });
    const read = await prisma.entitySyncedHeads.findUniqueOrThrow({
      where: { entityId_connectionId: { entityId, connectionId: connection.id } },
    });
    expect(read).toEqual(created);
    expect(read.heads).toEqual(['ab'.repeat(32), 'cd'.repeat(32)]);
  },

  MergeConflict: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.mergeConflict.create({
      data: {
        workspaceId: workspace.id,
        entityId: '0190a000-0000-7000-8000-0000000000d4',
        field: 'stage',
        kind: 'concurrent',
        policy: 'manual',
        candidates: [{ value: 'Won', source: { kind: 'connection', id: 'c1' }, eventTime: AT.toISOString() }],
        status: 'resolved',
        resolution: { value: 'Won', userId: 'u1' },
        resolvedBy: 'u1',
        resolvedAt: AT,
      },
    });
    expect(created.id).toMatch(UUID_V7);
    const read = await prisma.mergeConflict.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read.status).toBe('resolved');
  },

  FieldPolicy: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.fieldPolicy.create({
      data: {
        workspaceId: workspace.id,
        entityType: 'deal',
        field: 'stage',
        policy: 'priority',
        priority: ['c1', 'user'],
      },
    });
    expect(created.version).toBe(1);
    const read = await prisma.fieldPolicy.findUniqueOrThrow({
      where: {
        workspaceId_entityType_field: { workspaceId: workspace.id, entityType: 'deal', field: 'stage' },
      },
    });
    expect(read).toEqual(created);
    expect(read.priority).toEqual(['c1', 'user']);
  },
  PolicyInForce: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const policies = { stage: { kind: 'priority', order: ['c1', 'user'] }, amount: { kind: 'manual' } };
    const created = await prisma.policyInForce.create({
      data: { workspaceId: workspace.id, entityType: 'deal', policies, version: 3 },
    });
    const read = await prisma.policyInForce.findUniqueOrThrow({
      where: { workspaceId_entityType: { workspaceId: workspace.id, entityType: 'deal' } },
    });
    expect(read).toEqual(created);
    expect(read.policies).toEqual(policies);
    // A second set for the same type is refused: one set in force per type.
    await expect(
      prisma.policyInForce.create({
        data: { workspaceId: workspace.id, entityType: 'deal', policies: {}, version: 4 },
      }),
    ).rejects.toThrow();
  },
  // ── end conflicts round trips ──
  // ── sync engine round trips ──
  Outbox: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.outbox.create({
      data: {
        workspaceId: workspace.id,
        entityId: '0190a000-0000-7000-8000-0000000000e1',
        entityType: 'person',
        connectionId: '0190a000-0000-7000-8000-0000000000e2',
        op: 'update',
        externalId: '42',
        fields: { email: 'ada@example.com' },
        heads: ['abc'],
        idempotencyKey: 'k1',
      },
    });
    const read = await prisma.outbox.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read.status).toBe('pending');
    expect(read.fields).toEqual({ email: 'ada@example.com' });
  },

  WriteReceipt: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.writeReceipt.create({
      data: {
        connectionId: '0190a000-0000-7000-8000-0000000000e3',
        idempotencyKey: 'k2',
        workspaceId: workspace.id,
        entityId: '0190a000-0000-7000-8000-0000000000e4',
        entityType: 'meeting',
        externalId: 'evt1',
        contentHash: 'h',
        fields: { title: 'Call' },
        heads: ['h1', 'h2'],
      },
    });
    const read = await prisma.writeReceipt.findUniqueOrThrow({
      where: { connectionId_idempotencyKey: { connectionId: created.connectionId, idempotencyKey: 'k2' } },
    });
    expect(read).toEqual(created);
    expect(read.heads).toEqual(['h1', 'h2']);
  },

  WriteClaim: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.writeClaim.create({
      data: {
        connectionId: '0190a000-0000-7000-8000-0000000000e3',
        idempotencyKey: 'k3',
        attempt: 2,
        workspaceId: workspace.id,
        entityId: '0190a000-0000-7000-8000-0000000000e4',
        entityType: 'person',
        externalId: 'c1',
        fields: { jobTitle: 'CTO' },
        prior: {},
        heads: ['h1'],
        claimedAt: new Date('2026-12-01T10:00:00.000Z'),
        ingestedAt: new Date('2026-12-01T10:00:00.005Z'),
      },
    });
    const read = await prisma.writeClaim.findUniqueOrThrow({
      where: {
        connectionId_idempotencyKey_attempt: {
          connectionId: created.connectionId,
          idempotencyKey: 'k3',
          attempt: 2,
        },
      },
    });
    expect(read).toEqual(created);
  },

  PushSubscription: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.pushSubscription.create({
      data: {
        id: 'channel-1',
        connectionId: '0190a000-0000-7000-8000-0000000000e5',
        workspaceId: workspace.id,
        tokenCiphertext: new Uint8Array([9, 8, 7]),
        tokenKeyId: 'k1',
        expiresAt: new Date('2026-12-01T00:00:00.000Z'),
      },
    });
    const read = await prisma.pushSubscription.findUniqueOrThrow({ where: { id: 'channel-1' } });
    expect(read).toEqual(created);
    expect([...read.tokenCiphertext]).toEqual([9, 8, 7]);
  },
  // ── end sync engine round trips ──
  // ── audit round trips ──
  AuditLog: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const bare = await prisma.auditLog.create({
      data: { workspaceId: workspace.id, action: 'dead_letter.discarded', targetType: 'dead_letter' },
    });
    expect(bare.id).toMatch(UUID_V7);
    expect(bare).toMatchObject({ actorKeyId: null, actorUserId: null, targetId: null, details: {} });
    const created = await prisma.auditLog.create({
      data: {
        workspaceId: workspace.id,
        actorKeyId: '0190a000-0000-7000-8000-0000000000f1',
        actorUserId: '0190a000-0000-7000-8000-0000000000f2',
        action: 'connection.created',
        targetType: 'connection',
        targetId: '0190a000-0000-7000-8000-0000000000f3',
        details: { provider: 'hubspot', nested: [1, 'two', null] },
        createdAt: AT,
      },
    });
    const read = await prisma.auditLog.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read.details).toEqual({ provider: 'hubspot', nested: [1, 'two', null] });
    expect(read.createdAt.toISOString()).toBe(AT.toISOString());
  },
  // ── end audit round trips ──
  // ── field policy revision round trips ──
  FieldPolicyRevision: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const policies = {
      jobTitle: { kind: 'manual' },
      stage: { kind: 'priority', order: ['0190a000-0000-7000-8000-0000000000f4', 'user'] },
    };
    const created = await prisma.fieldPolicyRevision.create({
      data: {
        workspaceId: workspace.id,
        entityType: 'deal',
        version: 2_147_483_647,
        policies,
        changedBy: '0190a000-0000-7000-8000-0000000000f5',
        createdAt: AT,
      },
    });
    const read = await prisma.fieldPolicyRevision.findUniqueOrThrow({
      where: {
        workspaceId_entityType_version: {
          workspaceId: workspace.id,
          entityType: 'deal',
          version: 2_147_483_647,
        },
      },
    });
    expect(read).toEqual(created);
    expect(read.policies).toEqual(policies);
    expect(read.createdAt.toISOString()).toBe(AT.toISOString());
    // One row per version of a type: a second writer of the same version is refused.
    await expect(
      prisma.fieldPolicyRevision.create({
        data: {
          workspaceId: workspace.id,
          entityType: 'deal',
          version: 2_147_483_647,
          policies: {},
          changedBy: created.changedBy,
        },
      }),
    ).rejects.toMatchObject({ code: 'P2002' });
  },
  // ── end field policy revision round trips ──
  // ── dry run round trips ──
  StagedChange: async (prisma) => {
    const { workspace, connection } = await seedConnection(prisma);
    expect(connection.dryRun).toBe(false);
    const created = await prisma.stagedChange.create({
      data: {
        workspaceId: workspace.id,
        connectionId: connection.id,
        eventKey: 'contacts:42:1',
        entityType: 'person',
        externalId: '42',
        op: 'upsert',
        fields: { email: 'ada@example.com' },
        eventTime: AT,
        origin: { changeSource: 'CRM_UI' },
      },
    });
    const read = await prisma.stagedChange.findUniqueOrThrow({ where: { id: created.id } });
    expect(read).toEqual(created);
    expect(read).toMatchObject({ fieldTimes: {}, providerVersion: null });
    expect(read.eventTime.toISOString()).toBe(AT.toISOString());
    // A re-read record (same event key) is refused, as on the log.
    await expect(
      prisma.stagedChange.create({
        data: {
          workspaceId: workspace.id,
          connectionId: connection.id,
          eventKey: 'contacts:42:1',
          entityType: 'person',
          externalId: '42',
          op: 'upsert',
          eventTime: AT,
        },
      }),
    ).rejects.toMatchObject({ code: 'P2002' });
  },
  // ── end dry run round trips ──
  // ── activity association round trips ──
  EntityAssociation: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const meeting = await prisma.entity.create({
      data: { workspaceId: workspace.id, entityType: 'meeting' },
    });
    const person = await prisma.entity.create({ data: { workspaceId: workspace.id, entityType: 'person' } });
    const created = await prisma.entityAssociation.create({
      data: {
        activityId: meeting.id,
        role: 'attendee',
        email: 'ada@example.com',
        workspaceId: workspace.id,
        activityType: 'meeting',
        partyId: person.id,
        occurredAt: AT,
      },
    });
    const read = await prisma.entityAssociation.findUniqueOrThrow({
      where: {
        activityId_role_email: { activityId: meeting.id, role: 'attendee', email: 'ada@example.com' },
      },
    });
    expect(read).toEqual(created);
    expect(read.occurredAt.toISOString()).toBe(AT.toISOString());
    // Derived from the activity: gone with it.
    await prisma.entity.delete({ where: { id: meeting.id } });
    expect(await prisma.entityAssociation.count({ where: { workspaceId: workspace.id } })).toBe(0);
  },
  // ── end activity association round trips ──
  // ── entity relation round trips ──
  EntityRelation: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const person = await prisma.entity.create({ data: { workspaceId: workspace.id, entityType: 'person' } });
    const company = await prisma.entity.create({
      data: { workspaceId: workspace.id, entityType: 'company' },
    });
    const connectionId = '0190a000-0000-7000-8000-0000000000f1';
    const created = await prisma.entityRelation.create({
      data: {
        key: `${connectionId}|person|101|company|202`,
        workspaceId: workspace.id,
        kind: 'crm',
        fromType: 'person',
        fromId: person.id,
        toType: 'company',
        toId: company.id,
        connectionId,
        fromExternalId: '101',
        toExternalId: '202',
        since: `${connectionId}:contacts:101:1764000000000`,
        sinceAt: new Date('2026-11-20T09:00:00.123Z'),
      },
    });
    const derived = await prisma.entityRelation.create({
      data: {
        key: `derived|${person.id}|${company.id}`,
        workspaceId: workspace.id,
        kind: 'derived',
        fromType: 'person',
        fromId: person.id,
        toType: 'company',
        toId: company.id,
        evidence: { domain: 'acme.example', email: 'ada@acme.example' },
      },
    });
    expect(await prisma.entityRelation.findUniqueOrThrow({ where: { key: created.key } })).toEqual(created);
    expect((await prisma.entityRelation.findUniqueOrThrow({ where: { key: derived.key } })).evidence).toEqual(
      {
        domain: 'acme.example',
        email: 'ada@acme.example',
      },
    );
    // The associated entity gone: the CRM row waits unresolved; the carrying entity gone: all go.
    await prisma.entity.delete({ where: { id: company.id } });
    expect((await prisma.entityRelation.findUniqueOrThrow({ where: { key: created.key } })).toId).toBeNull();
    await prisma.entity.delete({ where: { id: person.id } });
    expect(await prisma.entityRelation.count({ where: { workspaceId: workspace.id } })).toBe(0);
  },
  RelationMirror: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const connectionId = '0190a000-0000-7000-8000-0000000000f7';
    const [fromId, toId] = ['0190a000-0000-7000-8000-0000000000a1', '0190a000-0000-7000-8000-0000000000a2'];
    const ours = await prisma.relationMirror.create({
      data: {
        key: `${connectionId}|person|${fromId}|company|${toId}`,
        workspaceId: workspace.id,
        connectionId,
        fromType: 'person',
        fromId,
        toType: 'company',
        toId,
        associateKey: `${fromId}.${connectionId}.associate.abc`,
      },
    });
    const declined = await prisma.relationMirror.create({
      data: {
        key: `${connectionId}|deal|${fromId}|person|${toId}`,
        workspaceId: workspace.id,
        connectionId,
        fromType: 'deal',
        fromId,
        toType: 'person',
        toId,
        declinedAt: new Date('2026-11-20T09:00:00.123Z'),
      },
    });
    expect(await prisma.relationMirror.findUniqueOrThrow({ where: { key: ours.key } })).toEqual(ours);
    expect(await prisma.relationMirror.findUniqueOrThrow({ where: { key: declined.key } })).toEqual(declined);
    expect([declined.associateKey, ours.declinedAt]).toEqual([null, null]);
  },
  // ── end entity relation round trips ──
  // ── connection mapping revision round trips ──
  ConnectionMappingRevision: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const connectionId = '0190a000-0000-7000-8000-0000000000f6';
    const mappings = { 'person.leadScore': 'lead_score', 'deal.amount': 'amount_eur' };
    const created = await prisma.connectionMappingRevision.create({
      data: {
        connectionId,
        version: 2_147_483_647,
        workspaceId: workspace.id,
        mappings,
        changedBy: '0190a000-0000-7000-8000-0000000000f7',
        createdAt: AT,
      },
    });
    const read = await prisma.connectionMappingRevision.findUniqueOrThrow({
      where: { connectionId_version: { connectionId, version: 2_147_483_647 } },
    });
    expect(read).toEqual(created);
    expect(read.mappings).toEqual(mappings);
    expect(read.createdAt.toISOString()).toBe(AT.toISOString());
    // One row per version of a connection: a second writer of the same version is refused.
    await expect(
      prisma.connectionMappingRevision.create({
        data: {
          connectionId,
          version: 2_147_483_647,
          workspaceId: workspace.id,
          mappings: {},
          changedBy: created.changedBy,
        },
      }),
    ).rejects.toMatchObject({ code: 'P2002' });
  },
  // ── end connection mapping revision round trips ──
  // ── replay round trips ──
  Replay: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const queued = await prisma.replay.create({
      data: { workspaceId: workspace.id, mode: 'preview', createdBy: '0190a000-0000-7000-8000-0000000000f8' },
    });
    expect(queued.id).toMatch(UUID_V7);
    expect(queued).toMatchObject({
      status: 'queued',
      fromEventTime: null,
      eventsTotal: null,
      eventsReplayed: 0,
      report: null,
      failureReason: null,
      attempts: 0,
      startedAt: null,
      finishedAt: null,
    });
    const report = {
      summary: { changes: 1 },
      changes: [{ entityId: 'x', fields: { title: { from: 'a', to: 'b' } } }],
    };
    const done = await prisma.replay.update({
      where: { id: queued.id },
      data: {
        mode: 'apply',
        fromEventTime: AT,
        status: 'succeeded',
        eventsTotal: 2_147_483_647,
        eventsReplayed: 2_147_483_647,
        report,
        attempts: 2,
        startedAt: AT,
        finishedAt: AT,
      },
    });
    const read = await prisma.replay.findUniqueOrThrow({ where: { id: queued.id } });
    expect(read).toEqual(done);
    expect(read.report).toEqual(report);
    expect(read.fromEventTime?.toISOString()).toBe(AT.toISOString());
  },
  // ── end replay round trips ──
  // ── sync health sample round trips ──
  DryRunReport: async (prisma) => {
    const { workspace, connection } = await seedConnection(prisma);
    // A failure before any report: the report's columns are null until the first one.
    const failed = await prisma.dryRunReport.create({
      data: { connectionId: connection.id, workspaceId: workspace.id, failureReason: 'boom', failedAt: AT },
    });
    expect(failed).toMatchObject({ report: null, stagedUpTo: null, complete: null, computedAt: null });
    const stored = await prisma.dryRunReport.update({
      where: { connectionId: connection.id },
      data: {
        stagedUpTo: 9_007_199_254_740_993n,
        complete: true,
        report: { summary: { links: 1 } },
        computedAt: AT,
      },
    });
    expect(await prisma.dryRunReport.findUniqueOrThrow({ where: { connectionId: connection.id } })).toEqual(
      stored,
    );
    expect(stored.stagedUpTo).toBe(9_007_199_254_740_993n);
  },
  SyncHealthSample: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const data = {
      workspaceId: workspace.id,
      sampledAt: AT,
      connectionId: '0190a000-0000-7000-8000-0000000000f9',
      status: 'live',
      lagEvents: 2_147_483_647,
      watermarkDelaySeconds: null,
      backfillSeen: 0,
      backfillTotal: null,
      pendingWrites: 3,
      writesOk: 4,
      writesFailed: { ValidationFailed: 2 },
      deadLettersOpen: 1,
      consumerLag: 5,
    };
    const created = await prisma.syncHealthSample.create({ data });
    const read = await prisma.syncHealthSample.findUniqueOrThrow({
      where: {
        workspaceId_sampledAt_connectionId: {
          workspaceId: workspace.id,
          sampledAt: AT,
          connectionId: data.connectionId,
        },
      },
    });
    expect(read).toEqual(created);
    expect(read.writesFailed).toEqual({ ValidationFailed: 2 });
    // One sample per connection per interval: a second sampler of the same interval is refused.
    await expect(prisma.syncHealthSample.create({ data })).rejects.toMatchObject({ code: 'P2002' });
  },
  // ── end sync health sample round trips ──
  // ── activity insights round trips ──
  ActivityContribution: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const key = {
      activityId: '0190a000-0000-7000-8000-0000000000a1',
      entityId: '0190a000-0000-7000-8000-0000000000b1',
      kind: 'mail_in',
      eventTime: AT,
    };
    const created = await prisma.activityContribution.create({
      data: {
        ...key,
        workspaceId: workspace.id,
        threadId: 't-1',
        connectionId: '0190a000-0000-7000-8000-0000000000c1',
      },
    });
    const read = await prisma.activityContribution.findUniqueOrThrow({
      where: { activityId_entityId_kind_eventTime: key },
    });
    expect(read).toEqual(created);
    // One contribution per (activity, person, kind, time): the same again is refused.
    await expect(
      prisma.activityContribution.create({
        data: { ...key, workspaceId: workspace.id, connectionId: '0190a000-0000-7000-8000-0000000000c1' },
      }),
    ).rejects.toMatchObject({ code: 'P2002' });
  },
  InsightsState: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.insightsState.create({
      data: { workspaceId: workspace.id, state: new Uint8Array([1, 2, 3]), watermark: AT },
    });
    const read = await prisma.insightsState.findUniqueOrThrow({ where: { workspaceId: workspace.id } });
    expect(read).toEqual(created);
    expect([...read.state]).toEqual([1, 2, 3]);
    expect(read.heldBy).toEqual([]);
    expect(read.version).toBe(0n);
  },
  InsightPane: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const key = {
      entityId: '0190a000-0000-7000-8000-0000000000b2',
      windowEnd: new Date('2026-12-01T00:00:00Z'),
    };
    const created = await prisma.insightPane.create({
      data: { ...key, workspaceId: workspace.id, metrics: { trend: 'warming' }, trigger: 'on_time' },
    });
    const read = await prisma.insightPane.findUniqueOrThrow({ where: { entityId_windowEnd: key } });
    expect(read).toEqual(created);
    expect(read.windowEnd.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  },
  InsightsSideOutput: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const data = {
      workspaceId: workspace.id,
      activityId: '0190a000-0000-7000-8000-0000000000a3',
      entityId: '0190a000-0000-7000-8000-0000000000b3',
      kind: 'meeting',
      eventTime: AT,
      sign: -1,
      reason: 'beyond_allowed_lateness',
      connectionId: '0190a000-0000-7000-8000-0000000000c3',
    };
    const first = await prisma.insightsSideOutput.create({ data });
    const second = await prisma.insightsSideOutput.create({ data });
    // Kept, not deduplicated: each arrival beyond the lateness is counted.
    expect(second.id).toBeGreaterThan(first.id);
    expect(await prisma.insightsSideOutput.findUniqueOrThrow({ where: { id: first.id } })).toEqual(first);
  },
  EntityInsight: async (prisma) => {
    const workspace = await seedWorkspace(prisma);
    const created = await prisma.entityInsight.create({
      data: {
        entityId: '0190a000-0000-7000-8000-0000000000b4',
        workspaceId: workspace.id,
        entityType: 'person',
        lastContactedAt: AT,
        lastContactedVia: 'mail_out',
        trend: 'steady',
        crm: { trend: 'steady', mailsOut30: 1 },
      },
    });
    const read = await prisma.entityInsight.findUniqueOrThrow({ where: { entityId: created.entityId } });
    expect(read).toEqual(created);
    expect(read.engagement30).toBe(0);
    expect(read.nextMeetingAt).toBeNull();
  },
  // ── end activity insights round trips ──
} satisfies Record<Prisma.ModelName, RoundTrip>;

describe('generated client round trip', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;

  beforeAll(async () => {
    db = await createTestDatabase('schema_client');
    prisma = createPrismaClient(db.url, { max: 2 });
  });

  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  it('covers every model of schema.prisma (add a round trip with each new model)', () => {
    expect(Object.keys(ROUND_TRIPS).sort()).toEqual(datamodel.models.map((m) => m.name).sort());
  });

  it.each(Object.entries(ROUND_TRIPS))(
    '%s: create, then read back the same row',
    async (_model, roundTrip) => {
      await roundTrip(prisma);
    },
  );
});
