import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

interface EditEvent {
  connection_id: string;
  entity_type: string;
  external_id: string;
  event_key: string;
  fields: Record<string, unknown>;
  origin: { kind: string; userId: string; resolves?: string };
}

/**
 * Edits and the conflicts inbox as the API sees them: validated, checked against the record
 * version, put on the change log as the caller's change of the workspace's own connection.
 * No workers run here, so every edit is accepted (202) and stays on the log; the e2e suite
 * follows edits all the way to the providers.
 */
describe('edits and the conflicts inbox', () => {
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  const ada = randomUUID();
  const acme = randomUUID();
  const openConflict = randomUUID();
  const settledConflict = randomUUID();

  const call = (key: string, method: 'GET' | 'PATCH' | 'POST', url: string, payload?: object, headers = {}) =>
    t.app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload ? { payload } : {}) });

  const editEvents = async (workspaceId: string): Promise<EditEvent[]> =>
    t.prisma.$queryRaw<EditEvent[]>`
      SELECT connection_id::text, entity_type, external_id, event_key, fields, origin
        FROM change_event WHERE workspace_id = ${workspaceId}::uuid ORDER BY partition, "offset"`;

  beforeAll(async () => {
    // A short wait for the merge: nothing consumes the log here.
    t = await startTestApp('edits');
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    const sales = await call(a.adminKey, 'POST', '/api/v1/api-keys', { name: 'rep', role: 'sales' });
    salesKey = sales.json<{ key: string }>().key;
    await t.prisma.$executeRaw`
      INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, version)
      VALUES (${ada}::uuid, ${a.workspaceId}::uuid, 'person', 'Ada',
              ${JSON.stringify({ email: 'ada@acme.test', jobTitle: 'Analyst', hs_custom_tier: 'gold' })}::jsonb, 7),
             (${acme}::uuid, ${a.workspaceId}::uuid, 'company', 'Acme', '{"name":"Acme"}'::jsonb, 3)`;
    const candidates = JSON.stringify([
      {
        value: 'Won',
        source: { kind: 'connection', id: randomUUID() },
        eventTime: '2026-11-20T10:00:00.000Z',
      },
      {
        value: 'Lost',
        source: { kind: 'connection', id: randomUUID() },
        eventTime: '2026-11-20T10:00:01.000Z',
      },
    ]);
    await t.prisma.$executeRaw`
      INSERT INTO merge_conflict (id, workspace_id, entity_id, field, kind, policy, candidates, status, created_at)
      VALUES (${openConflict}::uuid, ${a.workspaceId}::uuid, ${acme}::uuid, 'stage', 'concurrent', 'manual',
              ${candidates}::jsonb, 'open', '2026-11-20T10:00:02Z'),
             (${settledConflict}::uuid, ${a.workspaceId}::uuid, ${acme}::uuid, 'name', 'concurrent', 'lww',
              ${candidates}::jsonb, 'resolved', '2026-11-20T10:00:01Z')`;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('GET answers with the version as ETag', async () => {
    const res = await call(salesKey, 'GET', `/api/v1/people/${ada}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"7"');
  });

  it("a salesperson's edit goes on the log as theirs, from the workspace's own connection", async () => {
    const res = await call(
      salesKey,
      'PATCH',
      `/api/v1/people/${ada}`,
      { fields: { jobTitle: 'Director', hs_custom_tier: 'platinum', phone: null } },
      { 'if-match': '"7"', 'idempotency-key': 'edit-1' },
    );
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: true, changeKey: expect.stringMatching(/^edit:.+:edit-1$/) });
    const [event, ...more] = await editEvents(a.workspaceId);
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      entity_type: 'person',
      external_id: ada,
      fields: { jobTitle: 'Director', hs_custom_tier: 'platinum', phone: null },
      origin: { kind: 'user' },
    });
    const own = await t.prisma.connection.findUniqueOrThrow({ where: { id: event!.connection_id } });
    expect([own.workspaceId, own.provider]).toEqual([a.workspaceId, 'syncline']);
    // The same request again (a retry) is the same edit.
    const again = await call(
      salesKey,
      'PATCH',
      `/api/v1/people/${ada}`,
      { fields: { jobTitle: 'Director' } },
      { 'idempotency-key': 'edit-1' },
    );
    expect(again.statusCode).toBe(202);
    expect(await editEvents(a.workspaceId)).toHaveLength(1);
    // The workspace's own connection is no provider account: it is not listed.
    const listed = await call(a.adminKey, 'GET', '/api/v1/connections');
    expect(listed.json<{ data: { provider: string }[] }>().data.map((c) => c.provider)).not.toContain(
      'syncline',
    );
  });

  it('refuses, with nothing logged: a stale version, unknown fields, bad values and headers', async () => {
    const before = (await editEvents(a.workspaceId)).length;
    const stale = await call(
      salesKey,
      'PATCH',
      `/api/v1/people/${ada}`,
      { fields: { jobTitle: 'X' } },
      { 'if-match': '6' },
    );
    expect([stale.statusCode, stale.json().error.code]).toEqual([412, 'precondition_failed']);
    expect(stale.json().error.message).toContain('version 7');
    const cases: [object, Record<string, string>, number, string][] = [
      [{ fields: { shoeSize: 44 } }, {}, 400, 'bad_request'],
      [{ fields: {} }, {}, 400, 'validation_failed'],
      [{ fields: { jobTitle: { nested: true } } }, {}, 400, 'validation_failed'],
      [{ fields: { jobTitle: 'x' }, extra: 1 }, {}, 400, 'validation_failed'],
      [{ fields: { jobTitle: 'x' } }, { 'if-match': 'yesterday' }, 400, 'validation_failed'],
      [{ fields: { jobTitle: 'x' } }, { 'idempotency-key': 'no spaces please' }, 400, 'validation_failed'],
    ];
    for (const [payload, headers, status, code] of cases) {
      const res = await call(salesKey, 'PATCH', `/api/v1/people/${ada}`, payload, headers);
      expect([JSON.stringify(payload), res.statusCode, res.json().error.code]).toEqual([
        JSON.stringify(payload),
        status,
        code,
      ]);
    }
    const unknownField = await call(salesKey, 'PATCH', `/api/v1/people/${ada}`, { fields: { shoeSize: 44 } });
    expect(unknownField.json().error.message).toContain('shoeSize');
    // A company field on a person, and a record of another type or workspace, or none at all.
    expect(
      (await call(salesKey, 'PATCH', `/api/v1/companies/${ada}`, { fields: { name: 'A' } })).statusCode,
    ).toBe(404);
    expect(
      (await call(b.adminKey, 'PATCH', `/api/v1/people/${ada}`, { fields: { jobTitle: 'A' } })).statusCode,
    ).toBe(404);
    expect(
      (await call(salesKey, 'PATCH', `/api/v1/people/${randomUUID()}`, { fields: { jobTitle: 'A' } }))
        .statusCode,
    ).toBe(404);
    expect(
      (await call(salesKey, 'PATCH', '/api/v1/people/not-a-uuid', { fields: { jobTitle: 'A' } })).statusCode,
    ).toBe(400);
    expect(await editEvents(a.workspaceId)).toHaveLength(before);
    expect(await editEvents(b.workspaceId)).toEqual([]);
  });

  it('the conflicts inbox lists open conflicts with every candidate, only to their workspace', async () => {
    const open = await call(salesKey, 'GET', '/api/v1/conflicts');
    expect(open.statusCode).toBe(200);
    const body = open.json<{
      data: { id: string; candidates: { value: unknown }[] }[];
      nextCursor: string | null;
    }>();
    expect(body.data.map((c) => c.id)).toEqual([openConflict]);
    expect(body.data[0]).toMatchObject({
      recordId: acme,
      recordType: 'company',
      field: 'stage',
      policy: 'manual',
      status: 'open',
      winner: null,
      resolution: null,
    });
    expect(body.data[0]!.candidates.map((c) => c.value)).toEqual(['Won', 'Lost']);
    const resolved = await call(salesKey, 'GET', '/api/v1/conflicts?status=resolved&limit=1');
    expect(resolved.json<{ data: { id: string }[] }>().data.map((c) => c.id)).toEqual([settledConflict]);
    expect((await call(b.adminKey, 'GET', '/api/v1/conflicts')).json<{ data: unknown[] }>().data).toEqual([]);
    expect((await call(b.adminKey, 'GET', `/api/v1/conflicts/${openConflict}`)).statusCode).toBe(404);
    expect((await call(salesKey, 'GET', '/api/v1/conflicts?cursor=bm9wZQ')).statusCode).toBe(400);
    expect(
      (await call(salesKey, 'GET', `/api/v1/conflicts?recordId=${ada}`)).json<{ data: unknown[] }>().data,
    ).toEqual([]);
  });

  it('resolving a conflict is an edit of its field that names the conflict; a settled one is a 409', async () => {
    expect(
      (await call(b.adminKey, 'POST', `/api/v1/conflicts/${openConflict}/resolve`, { value: 'Won' }))
        .statusCode,
    ).toBe(404);
    const res = await call(salesKey, 'POST', `/api/v1/conflicts/${openConflict}/resolve`, { value: 'Won' });
    expect(res.statusCode).toBe(202);
    const resolution = (await editEvents(a.workspaceId)).find((e) => e.origin.resolves === openConflict);
    expect(resolution).toMatchObject({ entity_type: 'company', external_id: acme, fields: { stage: 'Won' } });
    const settled = await call(salesKey, 'POST', `/api/v1/conflicts/${settledConflict}/resolve`, {
      value: 'Acme',
    });
    expect([settled.statusCode, settled.json().error.code]).toEqual([409, 'conflict']);
    const bad = await call(salesKey, 'POST', `/api/v1/conflicts/${openConflict}/resolve`, { choice: 1 });
    expect(bad.statusCode).toBe(400);
  });

  it("a resolution's value, and an edit's, must be of the field's type: 400 naming the field", async () => {
    const deal = randomUUID();
    const amountConflict = randomUUID();
    const titleConflict = randomUUID();
    const customConflict = randomUUID();
    await t.prisma.$executeRaw`
      INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, version)
      VALUES (${deal}::uuid, ${a.workspaceId}::uuid, 'deal', 'Big deal', '{"name":"Big deal","amount":100}'::jsonb, 1)`;
    const candidates = (one: unknown, two: unknown) =>
      JSON.stringify([
        {
          value: one,
          source: { kind: 'connection', id: randomUUID() },
          eventTime: '2026-11-20T10:00:00.000Z',
        },
        {
          value: two,
          source: { kind: 'connection', id: randomUUID() },
          eventTime: '2026-11-20T10:00:01.000Z',
        },
      ]);
    await t.prisma.$executeRaw`
      INSERT INTO merge_conflict (id, workspace_id, entity_id, field, kind, policy, candidates, status)
      VALUES (${amountConflict}::uuid, ${a.workspaceId}::uuid, ${deal}::uuid, 'amount', 'concurrent', 'manual',
              ${candidates(100, 200)}::jsonb, 'open'),
             (${titleConflict}::uuid, ${a.workspaceId}::uuid, ${ada}::uuid, 'jobTitle', 'concurrent', 'manual',
              ${candidates('Analyst', 'Director')}::jsonb, 'open'),
             (${customConflict}::uuid, ${a.workspaceId}::uuid, ${ada}::uuid, 'hs_custom_tier', 'concurrent', 'manual',
              ${candidates('gold', 'silver')}::jsonb, 'open')`;
    const resolve = (id: string, value: unknown) =>
      call(salesKey, 'POST', `/api/v1/conflicts/${id}/resolve`, { value });
    const refusals: [string, unknown, string][] = [
      [amountConflict, '200', 'value: amount of a deal takes a number (or null)'],
      [amountConflict, [200], 'value: amount of a deal takes a number (or null)'],
      [amountConflict, { amount: 200 }, 'value: amount of a deal takes a number (or null)'],
      [titleConflict, 5, 'value: jobTitle of a person takes text (or null)'],
      [titleConflict, ['Director'], 'value: jobTitle of a person takes text (or null)'],
      [titleConflict, { title: 'Director' }, 'value: jobTitle of a person takes text (or null)'],
      [titleConflict, true, 'value: jobTitle of a person takes text (or null)'],
      [titleConflict, 'x'.repeat(10_001), 'value: jobTitle of a person: Too big'],
      // A custom field (a mapping's) carries text.
      [customConflict, 3, 'value: hs_custom_tier of a person takes text (or null)'],
    ];
    for (const [id, value, message] of refusals) {
      const res = await resolve(id, value);
      expect(
        [res.statusCode, res.json().error.code, res.json().error.message],
        JSON.stringify(value),
      ).toEqual([400, 'validation_failed', expect.stringContaining(`invalid request: ${message}`)]);
    }
    expect((await call(salesKey, 'POST', `/api/v1/conflicts/${titleConflict}/resolve`, {})).statusCode).toBe(
      400,
    );
    // Nothing refused reached the log; values of the field's type do.
    const resolving = async () =>
      (await editEvents(a.workspaceId)).filter((e) =>
        ([amountConflict, titleConflict, customConflict] as string[]).includes(e.origin.resolves ?? ''),
      );
    expect(await resolving()).toEqual([]);
    expect((await resolve(amountConflict, 200)).statusCode).toBe(202);
    expect((await resolve(titleConflict, 'Director')).statusCode).toBe(202);
    expect((await resolve(customConflict, null)).statusCode).toBe(202);
    expect((await resolving()).map((e) => e.fields)).toEqual(
      expect.arrayContaining([{ amount: 200 }, { jobTitle: 'Director' }, { hs_custom_tier: null }]),
    );

    const edit = (id: string, resource: string, fields: object) =>
      call(salesKey, 'PATCH', `/api/v1/${resource}/${id}`, { fields });
    const amountAsText = await edit(deal, 'deals', { amount: 'lots' });
    expect([amountAsText.statusCode, amountAsText.json().error.message]).toEqual([
      400,
      'invalid request: fields.amount: amount of a deal takes a number (or null)',
    ]);
    const titleAsNumber = await edit(ada, 'people', { jobTitle: 7, hs_custom_tier: ['gold'] });
    expect([titleAsNumber.statusCode, titleAsNumber.json().error.message]).toEqual([
      400,
      'invalid request: fields.jobTitle: jobTitle of a person takes text (or null); ' +
        'fields.hs_custom_tier: hs_custom_tier of a person takes text (or null)',
    ]);
    expect((await edit(deal, 'deals', { amount: 250, name: null })).statusCode).toBe(202);
  });
});
