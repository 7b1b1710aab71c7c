import { FilterOperatorEnum } from '@hubspot/api-client/lib/codegen/crm/contacts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubspotHarness } from './testing/hubspot-harness';
import { HubspotSchemas } from './testing/hubspot-schemas';

describe('HubSpot emulator: search through @hubspot/api-client', () => {
  let harness: HubspotHarness;

  beforeAll(async () => {
    harness = await HubspotHarness.start();
  });
  afterAll(async () => {
    await harness.close();
  });

  it('filters on lastmodifieddate with an epoch-ms value, pages by offset, and answers 400 past 10,000', async () => {
    const { portalId, client } = await harness.createPortal({ limits: { searchPerSecond: 1000 } });
    await harness.seed(portalId, 'contacts', 300);
    harness.advanceClock(60_000);
    const cutoff = harness.ctx.now();
    await harness.seed(portalId, 'contacts', 10_100);

    const request = (after: string) => ({
      filterGroups: [
        {
          filters: [
            { propertyName: 'lastmodifieddate', operator: FilterOperatorEnum.Gte, value: String(cutoff) },
          ],
        },
      ],
      sorts: ['lastmodifieddate'],
      properties: ['email', 'lastmodifieddate'],
      limit: 200,
      after,
    });
    const ids = new Set<string>();
    let after = '0';
    let total = 0;
    for (;;) {
      const page = await client.crm.contacts.searchApi.doSearch(request(after));
      total = page.total;
      for (const r of page.results) {
        ids.add(r.id);
        expect(Date.parse(r.properties.lastmodifieddate ?? '')).toBeGreaterThanOrEqual(cutoff);
      }
      const next = page.paging?.next?.after;
      if (!next) break;
      after = next;
      if (Number(after) >= 10_000) break;
    }
    expect(total).toBe(10_100);
    expect(ids.size).toBe(10_000);
    expect(after).toBe('10000');

    let refused: { code: number; body: Record<string, unknown> } | undefined;
    try {
      await client.crm.contacts.searchApi.doSearch(request(after));
    } catch (e) {
      refused = e as typeof refused;
    }
    expect(refused?.code).toBe(400);
    expect(refused?.body).toMatchObject({ status: 'error', category: 'VALIDATION_ERROR' });
  });

  it('defaults to 10 results, leaves archived records out and answers the free-text query', async () => {
    const { client } = await harness.createPortal();
    const created = await client.crm.contacts.batchApi.create({
      inputs: Array.from({ length: 12 }, (_, i) => ({
        properties: { email: `s${i}@search.test`, firstname: i === 3 ? 'Findme' : 'Other' },
        associations: [],
      })),
    });
    const page = await client.crm.contacts.searchApi.doSearch({});
    expect(page.total).toBe(12);
    expect(page.results).toHaveLength(10);
    expect(page.paging?.next?.after).toBe('10');
    const findme = await client.crm.contacts.searchApi.doSearch({ query: 'findme' });
    expect(findme.results.map((r) => r.properties.email)).toEqual(['s3@search.test']);
    await client.crm.contacts.basicApi.archive(created.results[0]?.id ?? '');
    expect((await client.crm.contacts.searchApi.doSearch({})).total).toBe(11);
  });

  it('refuses too many filter groups with a 400', async () => {
    const { client } = await harness.createPortal();
    const groups = Array.from({ length: 6 }, () => ({
      filters: [{ propertyName: 'email', operator: FilterOperatorEnum.HasProperty }],
    }));
    await expect(client.crm.contacts.searchApi.doSearch({ filterGroups: groups })).rejects.toMatchObject({
      code: 400,
      body: { category: 'VALIDATION_ERROR' },
    });
  });

  it('limits search to 5 requests per second per portal, with no rate-limit headers', async () => {
    const { accessToken } = await harness.createPortal();
    const search = () =>
      fetch(`${harness.url}/crm/v3/objects/contacts/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: '{}',
      });
    const answers = await Promise.all(Array.from({ length: 6 }, search));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    for (const a of answers) expect(a.headers.get('x-hubspot-ratelimit-max')).toBeNull();
    const refused = answers.find((a) => a.status === 429);
    // The SDK's retry decorator recognises this exact message.
    expect(await refused?.json()).toMatchObject({
      message: 'You have reached your secondly limit.',
      policyName: 'SECONDLY',
      errorType: 'RATE_LIMIT',
    });
  });

  it('answers every request above with bodies that match the published schemas', () => {
    const { checked, failures } = new HubspotSchemas().checkAll(harness.responses);
    expect(
      failures.map((f) => `${f.response.method} ${f.response.path} ${f.response.status}: ${f.errors}`),
    ).toEqual([]);
    expect(checked.length).toBeGreaterThan(50);
  });
});
