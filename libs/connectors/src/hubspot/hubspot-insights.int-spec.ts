import { Client } from '@hubspot/api-client';
import { describe, expect, it } from 'vitest';
import type { ConnectionContext, InsightValues, InsightWrite } from '../contract/connector';
import { unwrap } from '../contract/contract-suite';
import { hubspotConnector } from './hubspot.connector';
import { INSIGHT_PROPERTIES } from './hubspot-insight-properties';
import { hubspotTestPortals } from './testing/hubspot-test-portals';

const NAMES = INSIGHT_PROPERTIES.map((p) => p.name);
const TYPES = ['contacts', 'companies', 'deals'] as const;

const values: InsightValues = {
  lastContactedAt: '2026-11-28T09:30:00+01:00',
  lastContactedVia: 'meeting',
  nextMeetingAt: '2026-12-02T14:00:00.000Z',
  mailsIn30: 7,
  mailsOut30: 3,
  meetings30: 1,
  engagement7: 2,
  engagement90: 20,
  trend: 'warming',
};

/** The official SDK with the portal's token, to read what the connector left. */
async function sdkOf(ctx: ConnectionContext): Promise<Client> {
  return new Client({
    accessToken: unwrap(await ctx.tokens.accessToken()),
    basePath: ctx.endpoints.hubspotBaseUrl,
  });
}

/** One record's insight properties as a GET with `properties=` returns them. */
async function insightsOf(client: Client, objectType: (typeof TYPES)[number], id: string) {
  const record = await client.crm.objects.basicApi.getById(objectType, id, NAMES);
  return Object.fromEntries(NAMES.map((n) => [n, record.properties[n] ?? null]));
}

describe('hubspot insight properties against the emulator', () => {
  const { portal, control } = hubspotTestPortals('connectors-hubspot-insights', 10_000);

  it('creates the syncline group and its nine properties on contacts, companies and deals, once', async () => {
    const { ctx, requests } = await portal();
    const client = await sdkOf(ctx);
    for (const type of TYPES) {
      const groups = await client.crm.properties.groupsApi.getAll(type);
      expect(groups.results.map((g) => g.name)).not.toContain('syncline');
    }
    const first = unwrap(await hubspotConnector.ensureInsightProperties!(ctx));
    expect([...first.created].sort()).toEqual(TYPES.flatMap((t) => NAMES.map((n) => `${t}.${n}`)).sort());
    for (const type of TYPES) {
      const groups = await client.crm.properties.groupsApi.getAll(type);
      expect(groups.results.find((g) => g.name === 'syncline')).toMatchObject({
        label: 'Syncline activity (computed)',
      });
      const listed = new Map(
        (await client.crm.properties.coreApi.getAll(type)).results.map((p) => [p.name, p]),
      );
      for (const p of INSIGHT_PROPERTIES) {
        const made = listed.get(p.name);
        expect(made, `${type}.${p.name}`).toMatchObject({
          type: p.type,
          label: p.label,
          description: p.description,
          groupName: 'syncline',
          hubspotDefined: false,
        });
        expect(made?.modificationMetadata).toMatchObject({ readOnlyValue: false, archivable: true });
        expect(made?.options.map((o) => [o.value, o.label])).toEqual(
          (p.options ?? []).map((o) => [o.value, o.label]),
        );
      }
    }
    const posts = (await requests()).filter(
      (r) => r.method === 'POST' && r.path.startsWith('/crm/v3/properties'),
    );
    // Per type: the group, then each property.
    expect(posts).toHaveLength(3 * (1 + INSIGHT_PROPERTIES.length));
    // Idempotent: a second call finds everything and creates nothing.
    expect(unwrap(await hubspotConnector.ensureInsightProperties!(ctx)).created).toEqual([]);
    const again = (await requests()).filter(
      (r) => r.method === 'POST' && r.path.startsWith('/crm/v3/properties'),
    );
    expect(again).toHaveLength(posts.length);
  });

  it('completes what another call left half done, and refuses a property of ours made with another type', async () => {
    const { ctx } = await portal();
    const client = await sdkOf(ctx);
    await client.crm.properties.groupsApi.create('deals', { name: 'syncline', label: 'made earlier' });
    await client.crm.properties.coreApi.create('deals', {
      name: 'syncline_meetings_30d',
      label: 'made earlier',
      type: 'number' as never,
      fieldType: 'number' as never,
      groupName: 'syncline',
    });
    const made = unwrap(await hubspotConnector.ensureInsightProperties!(ctx));
    // Every property on the three types but the one made earlier.
    expect(made.created).toHaveLength(3 * INSIGHT_PROPERTIES.length - 1);
    expect(made.created).not.toContain('deals.syncline_meetings_30d');

    const { ctx: other } = await portal();
    const otherClient = await sdkOf(other);
    await otherClient.crm.properties.coreApi.create('companies', {
      name: 'syncline_next_meeting',
      label: 'by hand',
      type: 'string' as never,
      fieldType: 'text' as never,
      groupName: 'companyinformation',
    });
    const refused = await hubspotConnector.ensureInsightProperties!(other);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('Validation');
    expect(refused.ok ? '' : refused.error.message).toContain('syncline_next_meeting');
  });

  it('writes insight values that a GET of the contact, company and deal returns, and null clears them', async () => {
    const { ctx, requests } = await portal();
    unwrap(await hubspotConnector.ensureInsightProperties!(ctx));
    const client = await sdkOf(ctx);
    const contact = await client.crm.contacts.basicApi.create({ properties: { email: 'ins@example.com' } });
    const company = await client.crm.companies.basicApi.create({ properties: { name: 'Insight Co' } });
    const deal = await client.crm.deals.basicApi.create({ properties: { dealname: 'Insight deal' } });
    const writes: InsightWrite[] = [
      { entityType: 'person', externalId: contact.id, idempotencyKey: 'i-person', values },
      {
        entityType: 'company',
        externalId: company.id,
        idempotencyKey: 'i-company',
        values: { ...values, lastContactedVia: 'mail_in', trend: 'steady' },
      },
      {
        entityType: 'deal',
        externalId: deal.id,
        idempotencyKey: 'i-deal',
        values: { ...values, lastContactedVia: 'mail_out', trend: 'cold', mailsIn30: 0 },
      },
    ];
    const result = unwrap(await hubspotConnector.pushInsights!(ctx, writes));
    expect(result.map((r) => [r.idempotencyKey, r.outcome])).toEqual([
      ['i-person', 'written'],
      ['i-company', 'written'],
      ['i-deal', 'written'],
    ]);
    const expected = {
      syncline_last_contacted: '2026-11-28T08:30:00.000Z',
      syncline_last_contacted_via: 'meeting',
      syncline_next_meeting: '2026-12-02T14:00:00.000Z',
      syncline_mails_in_30d: '7',
      syncline_mails_out_30d: '3',
      syncline_meetings_30d: '1',
      syncline_engagement_7d: '2',
      syncline_engagement_90d: '20',
      syncline_engagement_trend: 'warming',
    };
    expect(await insightsOf(client, 'contacts', contact.id)).toEqual(expected);
    expect(await insightsOf(client, 'companies', company.id)).toEqual({
      ...expected,
      syncline_last_contacted_via: 'mail_in',
      syncline_engagement_trend: 'steady',
    });
    expect(await insightsOf(client, 'deals', deal.id)).toEqual({
      ...expected,
      syncline_last_contacted_via: 'mail_out',
      syncline_engagement_trend: 'cold',
      syncline_mails_in_30d: '0',
    });
    // The receipt's version is the record's version after the write, as a pull reports it.
    const after = await client.crm.contacts.basicApi.getById(contact.id);
    expect(result[0]!.providerVersion).toBe(after.updatedAt.toISOString());
    const updates = (await requests()).filter((r) => r.path.includes('/batch/update'));
    expect(updates.map((r) => r.path.split('?')[0])).toEqual([
      '/crm/v3/objects/contacts/batch/update',
      '/crm/v3/objects/companies/batch/update',
      '/crm/v3/objects/deals/batch/update',
    ]);

    // Null clears what was there.
    const cleared = await hubspotConnector.pushInsights!(ctx, [
      {
        ...writes[0]!,
        idempotencyKey: 'i-person-2',
        values: { ...values, lastContactedAt: null, lastContactedVia: null, nextMeetingAt: null },
      },
    ]);
    expect(unwrap(cleared).map((r) => r.outcome)).toEqual(['written']);
    expect(await insightsOf(client, 'contacts', contact.id)).toEqual({
      ...expected,
      syncline_last_contacted: null,
      syncline_last_contacted_via: null,
      syncline_next_meeting: null,
    });
  });

  it('answers gone for a deleted or merged-away record and writes the rest of the batch, 100 at most per call', async () => {
    const { ctx, requests, base } = await portal();
    unwrap(await hubspotConnector.ensureInsightProperties!(ctx));
    const client = await sdkOf(ctx);
    await control('POST', `${base}/seed/contacts`, { count: 120 });
    const seeded = await control<{ results: { id: string }[] }>('GET', `${base}/objects/contacts`);
    const ids = seeded.results.map((r) => r.id);
    expect(ids).toHaveLength(120);
    const [deleted, merged, survivor] = [ids[10]!, ids[110]!, ids[111]!];
    await client.crm.contacts.basicApi.archive(deleted);
    await client.crm.contacts.basicApi.merge({ primaryObjectId: survivor, objectIdToMerge: merged });
    const survivorBefore = await insightsOf(client, 'contacts', survivor);
    const writes: InsightWrite[] = ids
      .filter((id) => id !== survivor)
      .map((id, i) => ({
        entityType: 'person',
        externalId: id,
        idempotencyKey: `k-${i}`,
        values: { ...values, mailsIn30: i },
      }));
    const result = unwrap(await hubspotConnector.pushInsights!(ctx, writes));
    expect(result.map((r) => r.idempotencyKey)).toEqual(writes.map((w) => w.idempotencyKey));
    const outcome = new Map(result.map((r, i) => [writes[i]!.externalId, r.outcome]));
    expect(outcome.get(deleted)).toBe('gone');
    expect(outcome.get(merged)).toBe('gone');
    expect(result.filter((r) => r.outcome === 'written')).toHaveLength(writes.length - 2);
    expect(result.filter((r) => r.outcome === 'gone').map((r) => r.providerVersion)).toEqual([
      undefined,
      undefined,
    ]);
    // The others of both batches hold their own values.
    for (const w of [writes[0]!, writes[11]!, writes[105]!, writes.at(-1)!])
      expect(await insightsOf(client, 'contacts', w.externalId)).toMatchObject({
        syncline_mails_in_30d: String(w.values.mailsIn30),
        syncline_engagement_trend: 'warming',
      });
    expect(survivorBefore.syncline_mails_in_30d).toBeNull();
    const updates = (await requests()).filter((r) =>
      r.path.startsWith('/crm/v3/objects/contacts/batch/update'),
    );
    expect(updates).toHaveLength(2);
  });

  it('refuses types without insight properties and values HubSpot would refuse, writing nothing', async () => {
    const { ctx, requests } = await portal();
    const refused = await hubspotConnector.pushInsights!(ctx, [
      { entityType: 'meeting', externalId: '1', idempotencyKey: 'm', values },
    ]);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('Validation');
    const bad = await hubspotConnector.pushInsights!(ctx, [
      { entityType: 'person', externalId: '1', idempotencyKey: 'p', values: { ...values, mailsOut30: -2 } },
    ]);
    expect(bad.ok ? 'ok' : bad.error.code).toBe('Validation');
    expect((await requests()).filter((r) => r.path.includes('/batch/update'))).toEqual([]);
  });

  it('fails the push on a refusal other than a missing record, instead of calling its records gone', async () => {
    const { ctx, portalId } = await portal();
    const client = await sdkOf(ctx);
    const contact = await client.crm.contacts.basicApi.create({
      properties: { email: 'refused@example.com' },
    });
    await control('POST', '/_emulator/faults', {
      service: 'hubspot',
      kind: 'validation-error',
      count: 1,
      account: portalId,
    });
    const refused = await hubspotConnector.pushInsights!(ctx, [
      { entityType: 'person', externalId: contact.id, idempotencyKey: 'r', values },
    ]);
    expect(refused.ok ? refused.value : refused.error.code).toBe('Validation');
    // The fault used up, the same write goes through.
    const again = unwrap(
      await hubspotConnector.pushInsights!(ctx, [
        { entityType: 'person', externalId: contact.id, idempotencyKey: 'r', values },
      ]),
    );
    expect(again.map((r) => r.outcome)).toEqual(['written']);
  });
});
