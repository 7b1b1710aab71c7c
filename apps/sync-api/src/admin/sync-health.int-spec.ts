import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface ConnectionHealthBody {
  id: string;
  provider: string;
  status: string;
  lag: { events: number };
  pendingWrites: number;
  watermarkDelaySeconds: number | null;
}
interface HealthBody {
  connections: ConnectionHealthBody[];
  deadLetters: { open: number };
  insights: unknown;
  checkedAt: string;
}

describe('sync health', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let hubspot: string;
  let calendar: string;
  let globex: string;
  const watermark = new Date(Date.now() - 90_000);
  const lastPullAt = new Date(Date.now() - 10_000);
  const lastSuccessAt = new Date(Date.now() - 5_000);

  const health = async (key: string) => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/health/sync', headers: bearer(key) });
    expect(res.statusCode).toBe(200);
    return res.json<HealthBody>();
  };

  const event = (partition: number, offset: number, workspaceId: string, connectionId: string) =>
    t.prisma.$executeRaw`
      INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type,
                                external_id, op, event_time)
      VALUES (${partition}, ${offset}, ${workspaceId}::uuid, ${connectionId}::uuid,
              ${`k-${partition}-${offset}`}, 'person', ${String(offset)}, 'upsert', now())`;

  const outbox = (workspaceId: string, connectionId: string, key: string, status: string) =>
    t.prisma.outbox.create({
      data: {
        workspaceId,
        connectionId,
        entityId: '0190a000-0000-7000-8000-0000000000a1',
        entityType: 'person',
        op: 'update',
        fields: {},
        heads: [],
        idempotencyKey: key,
        status,
      },
    });

  const deadLetter = (workspaceId: string, status: 'open' | 'retried' | 'discarded') =>
    t.prisma.deadLetter.create({
      data: { workspaceId, source: 'queue', payload: {}, errorCode: 'X', errorMessage: 'x', status },
    });

  beforeAll(async () => {
    t = await startTestApp('sync_health');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    hubspot = (
      await t.prisma.connection.create({
        data: {
          workspaceId: a.workspaceId,
          provider: 'hubspot',
          externalAccountId: '4711',
          status: 'backfilling',
          backfillSeen: 120,
          backfillTotal: 500,
          watermark,
          lastPullAt,
          lastSuccessAt,
          lastErrorCode: 'RateLimited',
        },
      })
    ).id;
    calendar = (
      await t.prisma.connection.create({
        data: {
          workspaceId: a.workspaceId,
          provider: 'google_calendar',
          externalAccountId: 'ana@acme.test',
          status: 'needs_reauth',
          statusReason: 'token revoked',
        },
      })
    ).id;
    // The workspace's own connection (edits made in Syncline) is no provider account: not listed.
    await t.prisma.connection.create({
      data: {
        workspaceId: a.workspaceId,
        provider: 'syncline',
        externalAccountId: 'syncline',
        status: 'live',
      },
    });
    globex = (
      await t.prisma.connection.create({
        data: {
          workspaceId: b.workspaceId,
          provider: 'gmail',
          externalAccountId: 'bo@globex.test',
          status: 'live',
        },
      })
    ).id;

    // Partition 0: offsets 1-3 HubSpot's, 4 the calendar's; the sync group committed 2.
    // Partition 1: offsets 1-2 HubSpot's; the sync group committed 0 there.
    // Partition 2: offset 1 the calendar's, 2 Globex's; the sync group has no row for it (counts from 0).
    // Partition 3: offsets 1-5 HubSpot's, all committed.
    // The `audit` group, far behind everywhere, must not count.
    for (const offset of [1, 2, 3]) await event(0, offset, a.workspaceId, hubspot);
    await event(0, 4, a.workspaceId, calendar);
    for (const offset of [1, 2]) await event(1, offset, a.workspaceId, hubspot);
    await event(2, 1, a.workspaceId, calendar);
    await event(2, 2, b.workspaceId, globex);
    for (const offset of [1, 2, 3, 4, 5]) await event(3, offset, a.workspaceId, hubspot);
    await t.prisma.$executeRaw`
      INSERT INTO consumer_offset (group_name, partition, committed_offset)
      VALUES ('sync', 0, 2), ('sync', 1, 0), ('sync', 3, 5), ('audit', 0, 0), ('audit', 3, 0)`;

    // HubSpot: two pending and one being sent wait; sent, failed and superseded ones do not.
    for (const [key, status] of [
      ['h1', 'pending'],
      ['h2', 'pending'],
      ['h3', 'sending'],
      ['h4', 'sent'],
      ['h5', 'failed'],
      ['h6', 'superseded'],
    ] as const)
      await outbox(a.workspaceId, hubspot, key, status);
    await outbox(a.workspaceId, calendar, 'c1', 'sent');
    await outbox(b.workspaceId, globex, 'g1', 'pending');

    await deadLetter(a.workspaceId, 'open');
    await deadLetter(a.workspaceId, 'open');
    await deadLetter(a.workspaceId, 'retried');
    await deadLetter(a.workspaceId, 'discarded');
    await deadLetter(b.workspaceId, 'open');
    await t.prisma.$executeRaw`
      INSERT INTO insights_state (workspace_id, state, watermark, held_by, late, time_zone)
      VALUES (${a.workspaceId}::uuid, '\\x01'::bytea, '2026-11-20T10:00:00.000Z',
              ${JSON.stringify([{ connectionId: calendar, watermark: '2026-11-20T10:00:00.000Z' }])}::jsonb, 3,
              'Europe/Paris')`;
    await t.prisma.$executeRaw`
      INSERT INTO insights_side_output (workspace_id, activity_id, entity_id, kind, event_time, sign, reason, connection_id)
      VALUES (${a.workspaceId}::uuid, gen_random_uuid(), gen_random_uuid(), 'mail_in', '2026-11-01T00:00:00Z', 1,
              'beyond_allowed_lateness', ${calendar}::uuid)`;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("reports each connection's progress, lag and pending writes, and the open dead letters", async () => {
    const body = await health(a.adminKey);
    expect(body.deadLetters).toEqual({ open: 2 });
    // A's insights wait for its calendar; one activity came too late; its days are cut in its
    // zone. B's are not A's: B has none yet (no row), in the stage's default zone.
    expect(body.insights).toEqual({
      completeUpTo: '2026-11-20T10:00:00.000Z',
      heldBy: [{ connectionId: calendar, watermark: '2026-11-20T10:00:00.000Z' }],
      late: 3,
      sideOutput: 1,
      timeZone: 'Europe/Paris',
    });
    expect((await health(b.adminKey)).insights).toEqual({
      completeUpTo: null,
      heldBy: [],
      late: 0,
      sideOutput: 0,
      timeZone: 'UTC',
    });
    expect(Date.now() - Date.parse(body.checkedAt)).toBeLessThan(60_000);
    expect(body.connections).toEqual([
      {
        id: hubspot,
        provider: 'hubspot',
        displayName: null,
        externalAccountId: '4711',
        dryRun: false,
        hasCredentials: false,
        status: 'backfilling',
        statusReason: null,
        backfill: { seen: 120, total: 500 },
        lastPullAt: lastPullAt.toISOString(),
        lastSuccessAt: lastSuccessAt.toISOString(),
        lastErrorCode: 'RateLimited',
        watermark: watermark.toISOString(),
        watermarkDelaySeconds: expect.any(Number),
        lag: { events: 3 },
        pendingWrites: 3,
      },
      {
        id: calendar,
        provider: 'google-calendar',
        displayName: null,
        externalAccountId: 'ana@acme.test',
        dryRun: false,
        hasCredentials: false,
        status: 'needs_reauth',
        statusReason: 'token revoked',
        backfill: { seen: 0, total: null },
        lastPullAt: null,
        lastSuccessAt: null,
        lastErrorCode: null,
        watermark: null,
        watermarkDelaySeconds: null,
        lag: { events: 2 },
        pendingWrites: 0,
      },
    ]);
    const delay = body.connections[0]!.watermarkDelaySeconds!;
    expect(delay).toBeGreaterThanOrEqual(89);
    expect(delay).toBeLessThan(150);
  });

  it('follows the sync group as it commits and the outbox as it drains', async () => {
    await t.prisma
      .$executeRaw`UPDATE consumer_offset SET committed_offset = 3 WHERE group_name = 'sync' AND partition = 0`;
    await t.prisma.outbox.updateMany({
      where: { connectionId: hubspot, status: 'pending' },
      data: { status: 'sent' },
    });
    const body = await health(a.adminKey);
    expect(body.connections.map((c) => [c.id, c.lag.events, c.pendingWrites])).toEqual([
      [hubspot, 2, 1],
      [calendar, 2, 0],
    ]);
  });

  it('shows another workspace only its own connections and dead letters', async () => {
    const body = await health(b.adminKey);
    expect(body.deadLetters).toEqual({ open: 1 });
    expect(body.connections).toEqual([
      expect.objectContaining({
        id: globex,
        provider: 'gmail',
        status: 'live',
        lag: { events: 1 },
        pendingWrites: 1,
      }),
    ]);
  });

  it('is for admins only', async () => {
    const sales = await t.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: bearer(a.adminKey),
      payload: { name: 'rep', role: 'sales' },
    });
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/health/sync',
      headers: bearer(sales.json<{ key: string }>().key),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json<{ error: { code: string } }>().error.code).toBe('forbidden');
  });
});
