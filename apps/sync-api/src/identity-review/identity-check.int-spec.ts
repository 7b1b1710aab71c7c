import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface CheckBody {
  data: {
    entityId: string;
    displayName: string | null;
    problems: {
      kind: string;
      connectionId?: string;
      externalIds?: string[];
      names?: string[];
      values?: string[];
    }[];
    remedies: { kind: string; operationId?: string; absorbedId?: string; rule?: string }[];
  }[];
  total: number;
}

/**
 * The check over a workspace for wrong merges, against rows as an earlier version's fuzzy link
 * left them (Maria and Mario Garcia in one record, two contacts of one CRM) and as a merge
 * leaves them: each suspect listed with its problems and what takes it apart, most suspect
 * first; a sound record is not listed; another workspace's are not seen.
 */
describe('GET /api/v1/identity-check', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let crmA: string;
  let crmB: string;
  const garcia = randomUUID();
  const merged = randomUUID();
  const absorbed = randomUUID();
  const meeting = randomUUID();
  const sound = randomUUID();
  const mergeId = randomUUID();

  const entity = (
    id: string,
    workspaceId: string,
    type: string,
    name: string,
    names: string[],
    mergedInto?: string,
  ) =>
    t.prisma.$executeRaw`
      INSERT INTO entity (id, workspace_id, entity_type, display_name, match_keys, merged_into)
      VALUES (${id}::uuid, ${workspaceId}::uuid, ${type}, ${name},
              ${JSON.stringify({ names, blocks: [] })}::jsonb, ${mergedInto ?? null}::uuid)`;
  const link = (
    workspaceId: string,
    connectionId: string,
    externalId: string,
    entityId: string,
    type = 'person',
  ) =>
    t.prisma.$executeRaw`
      INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
      VALUES (${workspaceId}::uuid, ${connectionId}::uuid, ${type}, ${externalId}, ${entityId}::uuid)`;
  const key = (workspaceId: string, type: string, kind: string, value: string, entityId: string) =>
    t.prisma.$executeRaw`
      INSERT INTO match_key (workspace_id, entity_type, kind, value, entity_id)
      VALUES (${workspaceId}::uuid, ${type}, ${kind}, ${value}, ${entityId}::uuid)`;

  beforeAll(async () => {
    t = await startTestApp('identity_check');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    crmA = (
      await t.prisma.connection.create({
        data: { workspaceId: a.workspaceId, provider: 'hubspot', externalAccountId: '1' },
      })
    ).id;
    crmB = (
      await t.prisma.connection.create({
        data: { workspaceId: a.workspaceId, provider: 'hubspot', externalAccountId: '2' },
      })
    ).id;
    const calendar = (
      await t.prisma.connection.create({
        data: {
          workspaceId: a.workspaceId,
          provider: 'google_calendar',
          externalAccountId: 'me@acme.example',
        },
      })
    ).id;
    // Maria and Mario, linked by name and company under an earlier rule: four links, two of CRM A.
    await entity(garcia, a.workspaceId, 'person', 'Mario Garcia', ['maria garcia', 'mario garcia']);
    for (const [connection, id] of [
      [crmA, 'a-maria'],
      [crmA, 'a-mario'],
      [crmB, 'b-maria'],
      [crmB, 'b-mario'],
    ] as const)
      await link(a.workspaceId, connection, id, garcia);
    // A merge that left CRM B's two contacts in one record.
    await entity(merged, a.workspaceId, 'person', 'Ada Lovelace', ['ada lovelace']);
    await entity(absorbed, a.workspaceId, 'person', 'Ada Lovelace', ['ada lovelace'], merged);
    await link(a.workspaceId, crmB, 'b-ada-1', merged);
    await link(a.workspaceId, crmB, 'b-ada-2', merged);
    await t.prisma.$executeRaw`
      INSERT INTO identity_operation (id, workspace_id, kind, payload)
      VALUES (${mergeId}::uuid, ${a.workspaceId}::uuid, 'merge',
              ${JSON.stringify({ kind: 'merge', operationId: mergeId, workspaceId: a.workspaceId, entityType: 'person', survivorId: merged, absorbedId: absorbed, requestedBy: 'key-1', movedLinks: [], duplicates: [] })}::jsonb)`;
    // One meeting holding two events' iCalUIDs.
    await entity(meeting, a.workspaceId, 'meeting', 'Kickoff', []);
    await link(a.workspaceId, calendar, 'evt-1', meeting, 'meeting');
    await key(a.workspaceId, 'meeting', 'ical_uid', 'one@google.com', meeting);
    await key(a.workspaceId, 'meeting', 'ical_uid', 'two@google.com', meeting);
    // A sound person: one record per system, one name however written.
    await entity(sound, a.workspaceId, 'person', 'Ana Lima', ['ana lima', 'ana maria lima', 'lima ana']);
    await link(a.workspaceId, crmA, 'a-ana', sound);
    await link(a.workspaceId, crmB, 'b-ana', sound);
    // Workspace B's own suspect.
    const other = randomUUID();
    const crmC = (
      await t.prisma.connection.create({
        data: { workspaceId: b.workspaceId, provider: 'hubspot', externalAccountId: '3' },
      })
    ).id;
    await entity(other, b.workspaceId, 'person', 'Someone', ['jon smith', 'joan smith']);
    await link(b.workspaceId, crmC, 'c-1', other);
    await link(b.workspaceId, crmC, 'c-2', other);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('lists every suspect with its problems and remedies, most suspect first; a sound record is not listed', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/identity-check',
      headers: bearer(salesKey),
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<CheckBody>();
    expect(body.total).toBe(3);
    const ids = body.data.map((s) => s.entityId);
    expect(ids).not.toContain(sound);
    // Two records of one CRM first (both of them), the meeting's keys after.
    expect(ids.slice(0, 2).sort()).toEqual([garcia, merged].sort());
    expect(ids[2]).toBe(meeting);
    const maria = body.data.find((s) => s.entityId === garcia)!;
    expect(maria.problems).toEqual([
      { kind: 'two-records-of-one-connection', connectionId: crmA, externalIds: ['a-maria', 'a-mario'] },
      { kind: 'two-records-of-one-connection', connectionId: crmB, externalIds: ['b-maria', 'b-mario'] },
      { kind: 'names-disagree', names: ['maria garcia', 'mario garcia'] },
    ]);
    // Linked, not merged: a replay under today's rules takes it apart.
    expect(maria.remedies).toEqual([{ kind: 'replay' }]);
    const ada = body.data.find((s) => s.entityId === merged)!;
    expect(ada.remedies[0]).toEqual({
      kind: 'unmerge',
      operationId: mergeId,
      absorbedId: absorbed,
      rule: 'person-merge',
    });
    expect(body.data.find((s) => s.entityId === meeting)!.problems).toEqual([
      { kind: 'conflicting-keys', keyKind: 'ical_uid', values: ['one@google.com', 'two@google.com'] },
    ]);
  });

  it('filters by type, and refuses what it does not know', async () => {
    const people = await t.app.inject({
      method: 'GET',
      url: '/api/v1/identity-check?entityType=meeting',
      headers: bearer(salesKey),
    });
    expect(people.json<CheckBody>().data.map((s) => s.entityId)).toEqual([meeting]);
    const bad = await t.app.inject({
      method: 'GET',
      url: '/api/v1/identity-check?entityType=spaceship',
      headers: bearer(salesKey),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { code: string } }>().error.code).toBe('validation_failed');
  });

  it('another workspace sees only its own', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/identity-check',
      headers: bearer(b.adminKey),
    });
    const body = res.json<CheckBody>();
    expect(body.total).toBe(1);
    expect(body.data[0]?.problems.map((p) => p.kind)).toEqual([
      'two-records-of-one-connection',
      'names-disagree',
    ]);
    expect(body.data.map((s) => s.entityId)).not.toContain(garcia);
  });
});
