import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubspotHarness } from './testing/hubspot-harness';
import { HubspotSchemas } from './testing/hubspot-schemas';

type Failure = { code: number; body: Record<string, unknown>; headers: Record<string, string> };

async function failure(call: Promise<unknown>): Promise<Failure> {
  try {
    await call;
  } catch (e) {
    return e as Failure;
  }
  throw new Error('expected the call to fail');
}

describe('HubSpot emulator: rate limits and injected faults', () => {
  let harness: HubspotHarness;

  beforeAll(async () => {
    harness = await HubspotHarness.start();
  });
  afterAll(async () => {
    await harness.close();
  });

  it("carries HubSpot's rate-limit headers on every CRM answer", async () => {
    const { client } = await harness.createPortal({ limits: { per10s: 190 } });
    const first = await client.crm.contacts.basicApi.getPageWithHttpInfo();
    const second = await client.crm.contacts.basicApi.getPageWithHttpInfo();
    expect(first.headers).toMatchObject({
      'x-hubspot-ratelimit-interval-milliseconds': '10000',
      'x-hubspot-ratelimit-max': '190',
      'x-hubspot-ratelimit-remaining': '189',
      'x-hubspot-ratelimit-secondly': '19',
    });
    expect(second.headers['x-hubspot-ratelimit-remaining']).toBe('188');
  });

  it('answers 429 TEN_SECONDLY_ROLLING once the window is spent, and recovers after it', async () => {
    const { client } = await harness.createPortal({ limits: { per10s: 5, windowMs: 1000 } });
    for (let i = 0; i < 5; i++) await client.crm.contacts.basicApi.getPage();
    const refused = await failure(client.crm.contacts.basicApi.getPage());
    expect(refused.code).toBe(429);
    expect(refused.body).toMatchObject({
      status: 'error',
      message: 'You have reached your ten_secondly_rolling limit.',
      errorType: 'RATE_LIMIT',
      policyName: 'TEN_SECONDLY_ROLLING',
    });
    expect(refused.headers).toMatchObject({
      'x-hubspot-ratelimit-max': '5',
      'x-hubspot-ratelimit-remaining': '0',
      'x-hubspot-ratelimit-interval-milliseconds': '1000',
    });
    await new Promise((r) => setTimeout(r, 1050));
    const recovered = await client.crm.contacts.basicApi.getPageWithHttpInfo();
    expect(recovered.httpStatusCode).toBe(200);
  });

  it('limits each portal on its own', async () => {
    const a = await harness.createPortal({ limits: { per10s: 1 } });
    const b = await harness.createPortal({ limits: { per10s: 1 } });
    await a.client.crm.contacts.basicApi.getPage();
    expect((await failure(a.client.crm.contacts.basicApi.getPage())).code).toBe(429);
    await expect(b.client.crm.contacts.basicApi.getPage()).resolves.toBeDefined();
  });

  it('injects rate-limit, server-error and latency faults for the portal named', async () => {
    const { portalId, client } = await harness.createPortal();
    const other = await harness.createPortal();
    await harness.addFault({ service: 'hubspot', kind: 'rate-limit', account: portalId, count: 1 });
    await expect(other.client.crm.contacts.basicApi.getPage()).resolves.toBeDefined();
    const limited = await failure(client.crm.contacts.basicApi.getPage());
    expect(limited.code).toBe(429);
    expect(limited.body.policyName).toBe('TEN_SECONDLY_ROLLING');
    await expect(client.crm.contacts.basicApi.getPage()).resolves.toBeDefined();

    await harness.addFault({ service: 'hubspot', kind: 'server-error', account: String(portalId), count: 1 });
    const broken = await failure(client.crm.contacts.basicApi.getPage());
    expect(broken.code).toBe(500);
    expect(broken.body).toMatchObject({ status: 'error', category: 'INTERNAL_ERROR' });

    await harness.addFault({ service: 'hubspot', kind: 'latency', account: portalId, count: 1, ms: 300 });
    const started = Date.now();
    await client.crm.contacts.basicApi.getPage();
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('injects a validation-error fault that refuses writes of the portal named, never its reads', async () => {
    const { portalId, client } = await harness.createPortal();
    const created = await client.crm.contacts.basicApi.create({
      properties: { email: 'fault@example.com', jobtitle: 'Analyst' },
      associations: [],
    });
    // Two writes: the update and the batch update below; the write after them goes through.
    await harness.addFault({ service: 'hubspot', kind: 'validation-error', account: portalId, count: 2 });
    const refused = await failure(
      client.crm.contacts.basicApi.update(created.id, { properties: { jobtitle: 'Lead' } }),
    );
    expect(refused.code).toBe(400);
    expect(refused.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
    expect(String(refused.body.message)).toContain('Property values were not valid');
    const batch = await failure(
      client.crm.contacts.batchApi.update({ inputs: [{ id: created.id, properties: { jobtitle: 'Lead' } }] }),
    );
    expect(batch.code).toBe(400);
    // Reads, batch reads and searches still work, and nothing was written.
    const read = await client.crm.contacts.basicApi.getById(created.id, ['jobtitle']);
    expect(read.properties.jobtitle).toBe('Analyst');
    await expect(
      client.crm.contacts.batchApi.read({
        inputs: [{ id: created.id }],
        properties: [],
        propertiesWithHistory: [],
      }),
    ).resolves.toBeDefined();
    await expect(
      client.crm.contacts.searchApi.doSearch({ filterGroups: [], limit: 1 }),
    ).resolves.toBeDefined();
    const updated = await client.crm.contacts.basicApi.update(created.id, {
      properties: { jobtitle: 'Lead' },
    });
    expect(updated.properties.jobtitle).toBe('Lead');
  });

  it('answers an unknown token with 401 INVALID_AUTHENTICATION', async () => {
    const failed = await failure(harness.client('not-a-token').crm.contacts.basicApi.getPage());
    expect(failed.code).toBe(401);
    expect(failed.body).toMatchObject({ status: 'error', category: 'INVALID_AUTHENTICATION' });
  });

  it('answers every request above with bodies that match the published schemas', () => {
    const { checked, failures } = new HubspotSchemas().checkAll(harness.responses);
    expect(
      failures.map((f) => `${f.response.method} ${f.response.path} ${f.response.status}: ${f.errors}`),
    ).toEqual([]);
    expect(checked.length).toBeGreaterThan(15);
  });
});
