import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, HubspotHarness } from './testing/hubspot-harness';
import { HubspotSchemas } from './testing/hubspot-schemas';
import { WebhookReceiver } from './testing/webhook-receiver';

/** The SDK throws `ApiException { code, body }` for non-2xx answers. */
async function apiError(call: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await call;
  } catch (e) {
    return e as { code: number; body: Record<string, unknown> };
  }
  throw new Error('expected the call to fail');
}

/**
 * `POST /crm/v3/objects/{objectType}/merge` as HubSpot answers it, through the official SDK:
 * the primary survives with its own values and the ones it lacked, the merged id answers as
 * the primary, associations move over, a webhook says so, and refusals have HubSpot's shape.
 */
describe('HubSpot emulator: merging records through @hubspot/api-client', () => {
  let harness: HubspotHarness;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    harness = await HubspotHarness.start();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await harness.close();
  });

  it('merges two contacts: the primary keeps its values and takes the ones it lacked', async () => {
    const { client, portalId } = await harness.createPortal();
    const contacts = client.crm.contacts.basicApi;
    const primary = await contacts.create({
      properties: { email: 'ada@analytical.example', firstname: 'Ada', jobtitle: 'CTO' },
      associations: [],
    });
    const other = await contacts.create({
      properties: { email: 'countess@byron.example', firstname: 'Augusta', phone: '+44 20 7946 0000' },
      associations: [],
    });
    const company = await client.crm.companies.basicApi.create({
      properties: { name: 'Byron' },
      associations: [],
    });
    await client.crm.associations.v4.basicApi.createDefault('contacts', other.id, 'companies', company.id);

    const merged = await contacts.mergeWithHttpInfo({
      primaryObjectId: primary.id,
      objectIdToMerge: other.id,
    });
    expect(merged.httpStatusCode).toBe(200);
    expect(merged.data.id).toBe(primary.id);
    expect(merged.data.properties).toMatchObject({
      email: 'ada@analytical.example',
      firstname: 'Ada',
      jobtitle: 'CTO',
      phone: '+44 20 7946 0000',
      hs_merged_object_ids: other.id,
      hs_additional_emails: 'countess@byron.example',
    });

    // The merged id answers as the primary; lists and searches know only the primary.
    const viaOld = await contacts.getById(other.id, ['email', 'phone']);
    expect(viaOld.id).toBe(primary.id);
    const byOldEmail = await contacts.getById(
      'countess@byron.example',
      ['email'],
      undefined,
      undefined,
      false,
      'email',
    );
    expect(byOldEmail.id).toBe(primary.id);
    expect((await contacts.getPage(100)).results.map((r) => r.id)).toEqual([primary.id]);
    expect((await contacts.getPage(100, undefined, undefined, undefined, undefined, true)).results).toEqual(
      [],
    );
    const found = await client.crm.contacts.searchApi.doSearch({
      filterGroups: [{ filters: [{ propertyName: 'firstname', operator: 'EQ' as never, value: 'Augusta' }] }],
    });
    expect(found.total).toBe(0);

    // The merged record's association is the primary's now.
    const associated = await client.crm.associations.v4.basicApi.getPage('contacts', primary.id, 'companies');
    expect(associated.results.map((r) => String(r.toObjectId))).toEqual([company.id]);
    const fromCompany = await client.crm.associations.v4.basicApi.getPage(
      'companies',
      company.id,
      'contacts',
    );
    expect(fromCompany.results.map((r) => String(r.toObjectId))).toEqual([primary.id]);

    const logged = harness.ctx.requests
      .list({ service: 'hubspot', account: String(portalId) })
      .filter((r) => r.path.endsWith('/merge'));
    expect(logged).toEqual([
      expect.objectContaining({ method: 'POST', path: '/crm/v3/objects/contacts/merge', status: 200 }),
    ]);
  });

  it('merges companies and deals, at their names and at their type ids', async () => {
    const { client, accessToken } = await harness.createPortal();
    const [a, b] = await Promise.all(
      ['Acme', 'Acme Inc'].map((name, i) =>
        client.crm.companies.basicApi.create({
          properties: { name, ...(i === 1 ? { domain: 'acme.example' } : {}) },
          associations: [],
        }),
      ),
    );
    const company = await client.crm.companies.basicApi.merge({
      primaryObjectId: a!.id,
      objectIdToMerge: b!.id,
    });
    expect(company.properties).toMatchObject({
      name: 'Acme',
      domain: 'acme.example',
      hs_merged_object_ids: b!.id,
    });
    expect(company.properties.hs_additional_emails).toBeUndefined();

    const [d1, d2, d3] = await Promise.all(
      (
        [
          { dealname: 'Big deal', amount: '100' },
          { dealname: 'Same deal', dealstage: 'won' },
          { dealname: 'Third' },
        ] as Record<string, string>[]
      ).map((properties) => client.crm.deals.basicApi.create({ properties, associations: [] })),
    );
    const deal = await client.crm.deals.basicApi.merge({ primaryObjectId: d1!.id, objectIdToMerge: d2!.id });
    expect(deal.properties).toMatchObject({ dealname: 'Big deal', amount: '100', dealstage: 'won' });
    // The published spec's path names deals by type id.
    const raw = await fetch(`${harness.url}/crm/v3/objects/0-3/merge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ primaryObjectId: d1!.id, objectIdToMerge: d3!.id }),
    });
    expect(raw.status).toBe(200);
    expect(
      ((await raw.json()) as { properties: Record<string, string> }).properties.hs_merged_object_ids,
    ).toBe(`${d2!.id};${d3!.id}`);
  });

  it("refuses a record merged with itself, an unknown id and a missing id with HubSpot's errors", async () => {
    const { client } = await harness.createPortal();
    const contacts = client.crm.contacts.basicApi;
    const a = await contacts.create({ properties: { email: 'a@refuse.example' }, associations: [] });
    const b = await contacts.create({ properties: { email: 'b@refuse.example' }, associations: [] });

    const itself = await apiError(contacts.merge({ primaryObjectId: a.id, objectIdToMerge: a.id }));
    expect(itself.code).toBe(400);
    expect(itself.body).toMatchObject({
      status: 'error',
      category: 'VALIDATION_ERROR',
      message: 'Cannot merge an object with itself.',
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const unknown = await apiError(contacts.merge({ primaryObjectId: a.id, objectIdToMerge: '999' }));
    expect(unknown.code).toBe(404);
    expect(unknown.body).toMatchObject({ category: 'OBJECT_NOT_FOUND', context: { id: ['999'] } });
    const unknownPrimary = await apiError(contacts.merge({ primaryObjectId: '998', objectIdToMerge: b.id }));
    expect(unknownPrimary.body).toMatchObject({ category: 'OBJECT_NOT_FOUND', context: { id: ['998'] } });
    const missing = await fetch(`${harness.url}/crm/v3/objects/contacts/merge`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${(await harness.createPortal()).accessToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ primaryObjectId: a.id }),
    });
    expect(missing.status).toBe(400);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);

    // A merge sent again after it was done: refused, and the merged id reads as the primary.
    await contacts.merge({ primaryObjectId: a.id, objectIdToMerge: b.id });
    const again = await apiError(contacts.merge({ primaryObjectId: a.id, objectIdToMerge: b.id }));
    expect(again.code).toBe(400);
    expect(again.body).toMatchObject({
      category: 'VALIDATION_ERROR',
      message: `Object ${b.id} was already merged into ${a.id}.`,
    });
    expect((await contacts.getById(b.id)).id).toBe(a.id);
    // Nothing changed by the refusals: still one contact, with both addresses.
    const page = await contacts.getPage(100, undefined, ['email', 'hs_additional_emails']);
    expect(page.results.map((r) => [r.id, r.properties.hs_additional_emails])).toEqual([
      [a.id, 'b@refuse.example'],
    ]);
  });

  it('sends contact.merge, company.merge and deal.merge with the merge fields, as INTEGRATION', async () => {
    const hook = await WebhookReceiver.start();
    receivers.push(hook);
    const portal = await harness.createPortal({
      webhookUrl: hook.url,
      appId: 5077,
      subscriptions: ['contact', 'company', 'deal'].map((o) => ({ subscriptionType: `${o}.merge` })),
    });
    const { crm } = portal.client;
    const c1 = await crm.contacts.basicApi.create({
      properties: { email: 'x@hook.example' },
      associations: [],
    });
    const c2 = await crm.contacts.basicApi.create({
      properties: { email: 'y@hook.example', phone: '1' },
      associations: [],
    });
    const co1 = await crm.companies.basicApi.create({ properties: { name: 'One' }, associations: [] });
    const co2 = await crm.companies.basicApi.create({ properties: { name: 'Two' }, associations: [] });
    const d1 = await crm.deals.basicApi.create({ properties: { dealname: 'One' }, associations: [] });
    const d2 = await crm.deals.basicApi.create({ properties: { dealname: 'Two' }, associations: [] });
    await crm.contacts.basicApi.merge({ primaryObjectId: c1.id, objectIdToMerge: c2.id });
    await crm.companies.basicApi.merge({ primaryObjectId: co1.id, objectIdToMerge: co2.id });
    await crm.deals.basicApi.merge({ primaryObjectId: d1.id, objectIdToMerge: d2.id });
    await eventually(() => hook.events.length >= 3, 'three merge events');

    const of = (type: string) => hook.events.find((e) => e.subscriptionType === type);
    expect(of('contact.merge')).toMatchObject({
      portalId: portal.portalId,
      appId: 5077,
      objectId: Number(c1.id),
      primaryObjectId: Number(c1.id),
      mergedObjectIds: [Number(c2.id)],
      newObjectId: Number(c1.id),
      numberOfPropertiesMoved: 1,
      changeSource: 'INTEGRATION',
      sourceId: '5077',
      attemptNumber: 0,
    });
    expect(of('company.merge')).toMatchObject({
      primaryObjectId: Number(co1.id),
      mergedObjectIds: [Number(co2.id)],
    });
    expect(of('deal.merge')).toMatchObject({
      primaryObjectId: Number(d1.id),
      mergedObjectIds: [Number(d2.id)],
    });
    // A refused merge fires nothing.
    await apiError(crm.contacts.basicApi.merge({ primaryObjectId: c1.id, objectIdToMerge: c2.id }));
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.events).toHaveLength(3);
  });

  it('takes a secondary address off a contact (contacts v1), after which a new contact may have it', async () => {
    const { client, accessToken } = await harness.createPortal();
    const contacts = client.crm.contacts.basicApi;
    const a = await contacts.create({ properties: { email: 'a@second.example' }, associations: [] });
    const b = await contacts.create({ properties: { email: 'b@second.example' }, associations: [] });
    await contacts.merge({ primaryObjectId: a.id, objectIdToMerge: b.id });
    const taken = await apiError(
      contacts.create({ properties: { email: 'b@second.example' }, associations: [] }),
    );
    expect(taken.code).toBe(409);
    const call = (method: string, path: string) =>
      fetch(`${harness.url}${path}`, { method, headers: { authorization: `Bearer ${accessToken}` } });
    const listed = await call('GET', `/contacts/v1/secondary-email/${a.id}`);
    expect(await listed.json()).toMatchObject({ vid: Number(a.id), secondaryEmails: ['b@second.example'] });
    const removed = await call('DELETE', `/contacts/v1/secondary-email/${a.id}/email/b%40second.example`);
    expect(removed.status).toBe(200);
    expect(await removed.json()).toMatchObject({ vid: Number(a.id), secondaryEmails: [] });
    const gone = await call('DELETE', `/contacts/v1/secondary-email/${a.id}/email/b%40second.example`);
    expect(gone.status).toBe(404);
    expect((await gone.json()) as object).toMatchObject({ status: 'error', category: 'OBJECT_NOT_FOUND' });
    const c = await contacts.create({ properties: { email: 'b@second.example' }, associations: [] });
    expect(c.id).not.toBe(a.id);
    // The merged id still answers as the survivor.
    expect((await contacts.getById(b.id)).id).toBe(a.id);
  });

  it('answers every request above with bodies that match the published schemas', () => {
    const { checked, failures } = new HubspotSchemas().checkAll(harness.responses);
    expect(
      failures.map((f) => `${f.response.method} ${f.response.path} ${f.response.status}: ${f.errors}`),
    ).toEqual([]);
    const merges = checked.filter((c) => c.response.path.endsWith('/merge'));
    expect(merges.map((c) => c.response.status).sort()).toEqual(expect.arrayContaining([200, 400, 404]));
    expect(merges.every((c) => c.schema !== undefined)).toBe(true);
  });
});
