import type { SimplePublicObjectInputForCreate } from '@hubspot/api-client/lib/codegen/crm/contacts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubspotHarness } from './testing/hubspot-harness';
import { HubspotSchemas } from './testing/hubspot-schemas';

/** The SDK throws `ApiException { code, body }` for non-2xx answers. */
async function apiError(call: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await call;
  } catch (e) {
    return e as { code: number; body: Record<string, unknown> };
  }
  throw new Error('expected the call to fail');
}

const contact = (properties: Record<string, string>): SimplePublicObjectInputForCreate => ({
  properties,
  associations: [],
});

describe('HubSpot emulator: CRM objects through @hubspot/api-client', () => {
  let harness: HubspotHarness;

  beforeAll(async () => {
    harness = await HubspotHarness.start();
  });
  afterAll(async () => {
    await harness.close();
  });

  it("creates, reads, updates and archives with HubSpot's record shape and status codes", async () => {
    const { client } = await harness.createPortal();
    const created = await client.crm.contacts.basicApi.createWithHttpInfo(
      contact({ email: 'Ada@Example.com', firstname: 'Ada' }),
    );
    expect(created.httpStatusCode).toBe(201);
    const { id } = created.data;
    expect(created.data.properties).toMatchObject({
      email: 'ada@example.com',
      firstname: 'Ada',
      hs_object_id: id,
    });
    expect(created.data.createdAt).toBeInstanceOf(Date);

    const read = await client.crm.contacts.basicApi.getById(id, ['email', 'phone']);
    expect(read.properties).toEqual({
      createdate: created.data.properties.createdate,
      email: 'ada@example.com',
      hs_object_id: id,
      lastmodifieddate: created.data.properties.lastmodifieddate,
      phone: null,
    });
    const byEmail = await client.crm.contacts.basicApi.getById(
      'ADA@example.com',
      ['email'],
      undefined,
      undefined,
      false,
      'email',
    );
    expect(byEmail.id).toBe(id);

    const updated = await client.crm.contacts.basicApi.updateWithHttpInfo(id, {
      properties: { lastname: 'Lovelace' },
    });
    expect(updated.httpStatusCode).toBe(200);
    expect(updated.data.properties.lastname).toBe('Lovelace');

    const company = await client.crm.companies.basicApi.create({
      properties: { name: 'Acme' },
      associations: [],
    });
    expect(Object.keys(company.properties)).toEqual(
      expect.arrayContaining(['createdate', 'hs_lastmodifieddate', 'hs_object_id', 'name']),
    );
    expect(company.properties.lastmodifieddate).toBeUndefined();

    const archived = await client.crm.contacts.basicApi.archiveWithHttpInfo(id);
    expect(archived.httpStatusCode).toBe(204);
    const gone = await apiError(client.crm.contacts.basicApi.getById(id));
    expect(gone.code).toBe(404);
    expect(gone.body).toMatchObject({ status: 'error', category: 'OBJECT_NOT_FOUND' });
    expect(typeof gone.body.correlationId).toBe('string');
    const stillThere = await client.crm.contacts.basicApi.getById(id, undefined, undefined, undefined, true);
    expect(stillThere.archived).toBe(true);
    expect(stillThere.archivedAt).toBeInstanceOf(Date);
  });

  it('answers a duplicate email with 409 CONFLICT and a malformed body with 400', async () => {
    const { client, accessToken } = await harness.createPortal();
    const first = await client.crm.contacts.basicApi.create(contact({ email: 'dup@example.com' }));
    const conflict = await apiError(
      client.crm.contacts.basicApi.create(contact({ email: 'DUP@example.com' })),
    );
    expect(conflict.code).toBe(409);
    expect(conflict.body).toMatchObject({
      category: 'CONFLICT',
      message: `Contact already exists. Existing ID: ${first.id}`,
    });
    const response = await fetch(`${harness.url}/crm/v3/objects/contacts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: '{"properties":',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
  });

  it('takes properties as repeated keys (the SDK) and comma-joined (everyone else)', async () => {
    const { client, accessToken } = await harness.createPortal();
    const created = await client.crm.contacts.basicApi.create(
      contact({ email: 'x@example.com', firstname: 'X', lastname: 'Y' }),
    );
    const sdk = await client.crm.contacts.basicApi.getById(
      created.id,
      ['firstname', 'lastname'],
      ['firstname'],
    );
    const raw = await fetch(
      `${harness.url}/crm/v3/objects/contacts/${created.id}?properties=firstname,lastname&propertiesWithHistory=firstname`,
      { headers: { authorization: `Bearer ${accessToken}` } },
    ).then(
      (r) => r.json() as Promise<{ properties: unknown; propertiesWithHistory: Record<string, unknown[]> }>,
    );
    expect(raw.properties).toEqual(sdk.properties);
    expect(raw.propertiesWithHistory.firstname).toHaveLength(1);
  });

  it('keeps property history with timestamps and source types (INTEGRATION, CRM_UI)', async () => {
    const portal = await harness.createPortal();
    const created = await portal.client.crm.contacts.basicApi.create(
      contact({ email: 'h@example.com', firstname: 'Before' }),
    );
    harness.advanceClock(1000);
    const ui = await harness.control(
      'PATCH',
      `/_emulator/hubspot/portals/${portal.portalId}/ui/contacts/${created.id}`,
      {
        properties: { firstname: 'After' },
      },
    );
    expect(ui.status).toBe(200);
    const read = await portal.client.crm.contacts.basicApi.getById(created.id, ['firstname'], ['firstname']);
    const history = read.propertiesWithHistory?.firstname ?? [];
    expect(history.map((v) => [v.value, v.sourceType])).toEqual([
      ['After', 'CRM_UI'],
      ['Before', 'INTEGRATION'],
    ]);
    expect(history[0]?.sourceId).toMatch(/^userId:\d+$/);
    expect(history[1]?.sourceId).toBe(String(portal.appId));
    expect(history[0]?.timestamp.getTime()).toBeGreaterThan(
      history[1]?.timestamp.getTime() ?? Number.POSITIVE_INFINITY,
    );
    expect(read.properties.lastmodifieddate).toBe(history[0]?.timestamp.toISOString());
  });

  it('pages through 10,000+ contacts with basicApi.getPage', async () => {
    const { portalId, client } = await harness.createPortal({ limits: { per10s: 10_000 } });
    await harness.seed(portalId, 'contacts', 10_050);
    const ids = new Set<string>();
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await client.crm.contacts.basicApi.getPage(100, after, ['email']);
      for (const r of page.results) ids.add(r.id);
      after = page.paging?.next?.after;
      pages++;
    } while (after);
    expect(ids.size).toBe(10_050);
    expect(pages).toBe(101);
    // The shared request log saw every page, under this portal.
    expect(
      harness.ctx.requests.list({ account: String(portalId) }).filter((r) => r.method === 'GET'),
    ).toHaveLength(101);
  });

  it('batch upserts by email: new true, then new false', async () => {
    const { client } = await harness.createPortal();
    const inputs = [
      { id: 'one@example.com', idProperty: 'email', properties: { firstname: 'One' } },
      { id: 'two@example.com', idProperty: 'email', properties: { firstname: 'Two' } },
    ];
    const first = await client.crm.contacts.batchApi.upsertWithHttpInfo({ inputs });
    expect(first.httpStatusCode).toBe(200);
    expect(first.data.status).toBe('COMPLETE');
    expect(first.data.results.map((r) => [r.properties.email, r._new])).toEqual([
      ['one@example.com', true],
      ['two@example.com', true],
    ]);
    const again = await client.crm.contacts.batchApi.upsert({
      inputs: inputs.map((i) => ({ ...i, properties: { firstname: `${i.properties.firstname}!` } })),
    });
    expect(again.results.map((r) => [r.id, r._new, r.properties.firstname])).toEqual(
      first.data.results.map((r) => [r.id, false, `${r.properties.firstname}!`]),
    );
  });

  it('upserts by a custom unique property (syncline_id) on any object type', async () => {
    const { client } = await harness.createPortal();
    const input = { id: 'sl-42', idProperty: 'syncline_id', properties: { name: 'Acme' } };
    const first = await client.crm.companies.batchApi.upsert({ inputs: [input] });
    const second = await client.crm.companies.batchApi.upsert({
      inputs: [{ ...input, properties: { name: 'Acme Inc' } }],
    });
    expect(first.results[0]?._new).toBe(true);
    expect(second.results[0]).toMatchObject({ id: first.results[0]?.id, _new: false });
    const dup = await apiError(
      client.crm.companies.basicApi.create({ properties: { syncline_id: 'sl-42' }, associations: [] }),
    );
    expect(dup.code).toBe(409);
    const notUnique = await apiError(
      client.crm.companies.batchApi.upsert({ inputs: [{ id: 'x', idProperty: 'name', properties: {} }] }),
    );
    expect(notUnique.code).toBe(400);
  });

  it('reports partial batch failures as 207 and refuses more than 100 inputs', async () => {
    const { client } = await harness.createPortal();
    const created = await client.crm.contacts.batchApi.createWithHttpInfo({
      inputs: [contact({ email: 'b1@example.com' }), contact({ email: 'b1@example.com' })],
    });
    expect(created.httpStatusCode).toBe(207);
    expect(created.data).toMatchObject({ status: 'COMPLETE', numErrors: 1 });
    const id = created.data.results[0]?.id ?? '';
    const read = await client.crm.contacts.batchApi.readWithHttpInfo({
      inputs: [{ id }, { id: '1' }],
      properties: ['email'],
      propertiesWithHistory: [],
    });
    expect(read.httpStatusCode).toBe(207);
    expect(read.data).toMatchObject({
      numErrors: 1,
      errors: [{ category: 'OBJECT_NOT_FOUND', context: { ids: ['1'] } }],
    });
    const update = await client.crm.contacts.batchApi.update({
      inputs: [{ id, properties: { firstname: 'B' } }],
    });
    expect(update.results[0]?.properties.firstname).toBe('B');
    const tooMany = await apiError(
      client.crm.contacts.batchApi.create({
        inputs: Array.from({ length: 101 }, (_, i) => contact({ email: `m${i}@x.test` })),
      }),
    );
    expect(tooMany.code).toBe(400);
    expect(tooMany.body.category).toBe('VALIDATION_ERROR');
    await client.crm.contacts.batchApi.archive({ inputs: [{ id }] });
    expect((await apiError(client.crm.contacts.basicApi.getById(id))).code).toBe(404);
  });

  it('merges: the survivor keeps hs_merged_object_ids and the merged id still answers GET and PATCH', async () => {
    const { client } = await harness.createPortal();
    const primary = await client.crm.contacts.basicApi.create(
      contact({ email: 'p@example.com', firstname: 'Primary' }),
    );
    const other = await client.crm.contacts.basicApi.create(
      contact({ email: 'o@example.com', phone: '555' }),
    );
    const merged = await client.crm.contacts.basicApi.mergeWithHttpInfo({
      primaryObjectId: primary.id,
      objectIdToMerge: other.id,
    });
    expect(merged.httpStatusCode).toBe(200);
    expect(merged.data.id).toBe(primary.id);
    expect(merged.data.properties).toMatchObject({
      hs_merged_object_ids: other.id,
      phone: '555',
      firstname: 'Primary',
    });
    const viaMergedId = await client.crm.contacts.basicApi.getById(other.id, ['email']);
    expect(viaMergedId.id).toBe(primary.id);
    const patched = await client.crm.contacts.basicApi.update(other.id, {
      properties: { lastname: 'Merged' },
    });
    expect(patched.id).toBe(primary.id);
    const page = await client.crm.contacts.basicApi.getPage(100);
    expect(page.results.map((r) => r.id)).toEqual([primary.id]);
  });

  it('lists the seeded owners', async () => {
    const { client } = await harness.createPortal();
    const owners = await client.crm.owners.ownersApi.getPage();
    expect(owners.results).toHaveLength(3);
    const first = owners.results[0];
    expect(first).toMatchObject({ type: 'PERSON', archived: false });
    const byId = await client.crm.owners.ownersApi.getById(Number(first?.id));
    expect(byId.email).toBe(first?.email);
  });

  it('records every data-plane request with the portal as account', async () => {
    const { portalId, client } = await harness.createPortal();
    await client.crm.contacts.basicApi.getPage();
    const logged = harness.ctx.requests.list({ service: 'hubspot', account: String(portalId) });
    expect(logged).toEqual([
      {
        at: expect.any(String),
        service: 'hubspot',
        method: 'GET',
        path: '/crm/v3/objects/contacts',
        status: 200,
        account: String(portalId),
      },
    ]);
  });

  it('answers every request above with bodies that match the published schemas', () => {
    const { checked, failures } = new HubspotSchemas().checkAll(harness.responses);
    expect(
      failures.map((f) => `${f.response.method} ${f.response.path} ${f.response.status}: ${f.errors}`),
    ).toEqual([]);
    expect(checked.length).toBeGreaterThan(100);
  });
});
