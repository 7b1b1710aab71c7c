import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../auth/api-key-format';
import { bearer } from '../testing/test-app';
import { type AimedRequest, addressesRows, requestsAimedAt } from './testing/aimed-requests';
import { type ApiResponse, errorCode, errorShapeProblem, send } from './testing/api-call';
import { fetchOpenApiDocument, listOperations, type Operation } from './testing/openapi-operations';
import {
  inRunOrder,
  OTHER_AUTH,
  PROVIDER_PROVEN,
  PROVIDER_REFUSALS,
  PUBLIC,
  RUN_LAST,
  SALES_WRITES,
} from './testing/route-lists';
import { seedTwoWorkspaces, startConfiguredApp, workspaceRows } from './testing/two-workspaces';

/**
 * Tenant isolation and roles over every operation of the OpenAPI document, read at run time:
 * a route is covered the moment it is documented. Workspace A holds a row of every kind a
 * route addresses; workspace B's keys aim every request at A's ids, with bodies valid for A.
 */

const t = await startConfiguredApp('openapi_isolation');
afterAll(async () => {
  await t.close();
});
const operations = inRunOrder(listOperations(await fetchOpenApiDocument(t.app)));
const { a, b } = await seedTwoWorkspaces(t).catch(async (error: unknown) => {
  await t.close();
  throw error;
});
/** A as seeded, before B's keys try anything. */
const before = await workspaceRows(t.prisma, a.workspaceId);

const keyed = operations.filter((op) => !OTHER_AUTH.includes(op.key) && !PUBLIC.includes(op.key));
const adminOnly = (op: Operation): boolean => op.statuses.includes(403);
// A's ids, the spare key before the sales key; A's admin key last (A's own calls never revoke it).
const idsOfA = [
  ...Object.entries(a.ids)
    .filter(([kind]) => kind !== 'api_key:admin' && kind !== 'api_key:sales')
    .map(([, id]) => id),
  a.ids['api_key:sales'] as string,
];
const everyIdOfA = [...idsOfA, a.ids['api_key:admin'] as string];

const call = (op: Operation, request: AimedRequest, auth: Record<string, string>): Promise<ApiResponse> =>
  send(t.app, {
    method: op.method,
    url: request.url,
    headers: { ...request.headers, ...auth },
    ...(request.payload === undefined ? {} : { payload: request.payload as object }),
  });

const describeCall = (op: Operation, request: AimedRequest, res: ApiResponse): string =>
  `${op.method} ${request.url} ${JSON.stringify(request.payload ?? null)} → ${res.status} ${res.text.slice(0, 300)}`;

/** What of A the answer carries that the request did not: an echoed id is no leak, anything else is. */
function leaksOfA(request: AimedRequest, res: ApiResponse): string[] {
  const body = res.text.toLowerCase();
  const sent = `${request.url} ${JSON.stringify(request.payload ?? null)}`.toLowerCase();
  return [
    ...a.needles.filter(
      (needle) => body.includes(needle.toLowerCase()) && !sent.includes(needle.toLowerCase()),
    ),
    ...a.secrets.filter((secret) => res.text.includes(secret)),
  ];
}

describe('the OpenAPI document', () => {
  it('has every route the lists above name', () => {
    const keys = operations.map((op) => op.key);
    expect(keys).toEqual(
      expect.arrayContaining([...OTHER_AUTH, ...PUBLIC, ...SALES_WRITES, ...RUN_LAST, ...PROVIDER_PROVEN]),
    );
  });

  it('marks as keyless exactly the public and otherwise-authenticated routes, and every webhook is one', () => {
    const keyless = operations.filter((op) => !op.secured).map((op) => op.key);
    expect(keyless.sort()).toEqual([...OTHER_AUTH, ...PUBLIC].sort());
    const webhooks = operations.filter((op) => op.path.startsWith('/webhooks/')).map((op) => op.key);
    expect(OTHER_AUTH).toEqual(expect.arrayContaining(webhooks));
  });

  it('documents 403 on every write a salesperson may not make', () => {
    const writes = keyed.filter((op) => op.method !== 'GET');
    expect(
      writes.filter((op) => !adminOnly(op) && !SALES_WRITES.includes(op.key)).map((op) => op.key),
    ).toEqual([]);
    expect(writes.filter((op) => adminOnly(op) && SALES_WRITES.includes(op.key)).map((op) => op.key)).toEqual(
      [],
    );
  });
});

describe("workspace B's keys, aimed at A's rows", () => {
  it('A is seeded with a row of every kind', () => {
    for (const table of ['entity', 'merge_conflict', 'dead_letter', 'connection', 'api_key', 'audit_log'])
      expect(before[table]?.length, table).toBeGreaterThan(0);
  });

  it.each(keyed.map((op) => [op.key, op] as const))('%s', async (_key, op) => {
    const failures: string[] = [];
    const requests = requestsAimedAt(op, everyIdOfA);
    expect(requests.length).toBeGreaterThan(0);
    for (const [role, key] of [
      ['admin', b.adminKey],
      ['sales', b.salesKey],
    ] as const) {
      for (const request of requests) {
        const res = await call(op, request, bearer(key));
        const what = `B ${role}: ${describeCall(op, request, res)}`;
        if (res.status >= 500) failures.push(`server error: ${what}`);
        if (res.streamed) continue;
        const leaks = leaksOfA(request, res);
        if (leaks.length > 0) failures.push(`carries A's ${leaks.join(', ')}: ${what}`);
        if (!addressesRows(op)) continue;
        // Another workspace's row does not exist for B; only a role check may come first.
        const expected = role === 'sales' && adminOnly(op) ? 403 : 404;
        if (res.status !== expected || errorShapeProblem(res.text) !== null)
          failures.push(`expected ${expected} in the error shape: ${what}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it.each(keyed.map((op) => [op.key, op] as const))('without a valid key: 401, %s', async (_key, op) => {
    const [request] = requestsAimedAt(op, everyIdOfA);
    if (request === undefined) throw new Error(`no request for ${op.key}`);
    for (const auth of [{}, bearer(generateApiKey().key), { authorization: 'Bearer sk_not-a-key' }]) {
      const res = await call(op, request, auth);
      expect(
        [res.status, errorCode(res.text), res.headers['www-authenticate']],
        describeCall(op, request, res),
      ).toEqual([401, 'unauthorized', 'Bearer']);
    }
  });

  it("left every row of A as it was, and put none of A's ids or data in B's rows", async () => {
    expect(await workspaceRows(t.prisma, a.workspaceId)).toEqual(before);
    const ofB = Object.entries(await workspaceRows(t.prisma, b.workspaceId)).flatMap(([table, rows]) =>
      rows.filter((row) => a.needles.some((needle) => row.includes(needle))).map((row) => `${table}: ${row}`),
    );
    expect(ofB).toEqual([]);
  });
});

describe("A's sales key", () => {
  it.each(keyed.map((op) => [op.key, op] as const))('%s', async (_key, op) => {
    const failures: string[] = [];
    for (const request of requestsAimedAt(op, idsOfA)) {
      const res = await call(op, request, bearer(a.salesKey));
      const what = describeCall(op, request, res);
      if (res.status >= 500) failures.push(`server error: ${what}`);
      if (adminOnly(op) && (res.status !== 403 || errorCode(res.text) !== 'forbidden'))
        failures.push(`admin only (documents 403), expected 403 forbidden: ${what}`);
      if (!adminOnly(op) && res.status === 403)
        failures.push(`open to sales (documents no 403), answered 403: ${what}`);
    }
    expect(failures).toEqual([]);
  });
});

describe("A's admin key, with the same requests", () => {
  const addressing = keyed.filter(addressesRows);

  it.each(addressing.map((op) => [op.key, op] as const))('reaches the row: %s', async (_key, op) => {
    // Proves the requests above were valid for A: B was refused for the workspace, not the input.
    const answers: string[] = [];
    for (const request of requestsAimedAt(op, idsOfA)) {
      const res = await call(op, request, bearer(a.adminKey));
      answers.push(describeCall(op, request, res));
      if (res.status === 404) continue;
      // Reached: the provider was asked about this row's account (a generated token is refused).
      if (res.status === 400 && PROVIDER_REFUSALS.includes(errorCode(res.text))) return;
      expect(res.status, describeCall(op, request, res)).not.toBeOneOf([400, 401, 403, 413, 415, 422]);
      expect(res.status, describeCall(op, request, res)).toBeLessThan(500);
      if (op.method === 'GET' && !res.streamed) {
        for (const id of request.aims) expect(res.text, 'the row read is the one named').toContain(id);
        expect(
          [a.marker, ...a.accounts].filter((marker) => res.text.includes(marker)),
          "A's own rows carry the marker (or account) the leak check looks for",
        ).not.toEqual([]);
      }
      return;
    }
    throw new Error(`no id of A reached a row of ${op.key}:\n${answers.join('\n')}`);
  });
});
