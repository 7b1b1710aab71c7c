import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubspotHarness } from './testing/hubspot-harness';

/** The SDK throws `ApiException { code, body }` for non-2xx answers. */
async function apiError(call: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await call;
  } catch (e) {
    return e as { code: number; body: Record<string, unknown> };
  }
  throw new Error('expected the call to fail');
}

describe('HubSpot emulator: properties and property groups through @hubspot/api-client', () => {
  let harness: HubspotHarness;

  beforeAll(async () => {
    harness = await HubspotHarness.start();
  });
  afterAll(async () => {
    await harness.close();
  });

  it('lists groups that hold every built-in property, and creates a group once', async () => {
    const { client } = await harness.createPortal();
    for (const type of ['contacts', 'companies', 'deals', 'meetings', 'tasks', 'emails']) {
      const groups = new Set((await client.crm.properties.groupsApi.getAll(type)).results.map((g) => g.name));
      const properties = (await client.crm.properties.coreApi.getAll(type)).results;
      expect(properties.length).toBeGreaterThan(3);
      for (const p of properties) expect(groups, `${type}.${p.name}`).toContain(p.groupName);
      expect(groups).not.toContain('syncline');
    }
    const created = await client.crm.properties.groupsApi.createWithHttpInfo('contacts', {
      name: 'syncline',
      label: 'Syncline activity (computed)',
      displayOrder: -1,
    });
    expect(created.httpStatusCode).toBe(201);
    expect(created.data).toEqual({
      name: 'syncline',
      label: 'Syncline activity (computed)',
      displayOrder: -1,
      archived: false,
    });
    expect((await client.crm.properties.groupsApi.getAll('contacts')).results.map((g) => g.name)).toContain(
      'syncline',
    );
    expect(await client.crm.properties.groupsApi.getByName('contacts', 'syncline')).toMatchObject({
      label: 'Syncline activity (computed)',
    });
    // Per object type: deals have no such group yet.
    expect((await client.crm.properties.groupsApi.getAll('deals')).results.map((g) => g.name)).not.toContain(
      'syncline',
    );
    const again = await apiError(
      client.crm.properties.groupsApi.create('contacts', { name: 'syncline', label: 'again' }),
    );
    expect(again.code).toBe(409);
    expect(again.body).toMatchObject({ category: 'OBJECT_ALREADY_EXISTS' });
    expect((await apiError(client.crm.properties.groupsApi.getByName('contacts', 'nope'))).code).toBe(404);
  });

  it('creates a property only in an existing group, keeping options and modification metadata', async () => {
    const { client } = await harness.createPortal();
    const definition = {
      name: 'syncline_engagement_trend',
      label: 'Engagement trend (Syncline)',
      description: 'Computed by Syncline.',
      type: 'enumeration' as never,
      fieldType: 'select' as never,
      groupName: 'syncline',
      options: [
        { value: 'warming', label: 'Warming', hidden: false },
        { value: 'cold', label: 'Cold', hidden: false, displayOrder: 5 },
      ],
    };
    const refused = await apiError(client.crm.properties.coreApi.create('deals', definition));
    expect(refused.code).toBe(400);
    expect(refused.body).toMatchObject({
      category: 'VALIDATION_ERROR',
      context: { groupName: ['syncline'] },
    });
    expect((await client.crm.properties.coreApi.getAll('deals')).results.map((p) => p.name)).not.toContain(
      'syncline_engagement_trend',
    );

    await client.crm.properties.groupsApi.create('deals', { name: 'syncline', label: 'Syncline' });
    const created = await client.crm.properties.coreApi.createWithHttpInfo('deals', definition);
    expect(created.httpStatusCode).toBe(201);
    const read = await client.crm.properties.coreApi.getByName('deals', 'syncline_engagement_trend');
    expect(read).toMatchObject({
      type: 'enumeration',
      groupName: 'syncline',
      hubspotDefined: false,
      modificationMetadata: {
        archivable: true,
        readOnlyDefinition: false,
        readOnlyValue: false,
        readOnlyOptions: false,
      },
    });
    expect(read.options.map((o) => [o.value, o.label, o.displayOrder, o.hidden])).toEqual([
      ['warming', 'Warming', 0, false],
      ['cold', 'Cold', 5, false],
    ]);
    const builtIn = await client.crm.properties.coreApi.getByName('deals', 'dealname');
    expect(builtIn.modificationMetadata).toMatchObject({ archivable: false, readOnlyDefinition: true });
    expect(
      (
        await apiError(
          client.crm.properties.coreApi.create('deals', { ...definition, groupName: 'syncline' }),
        )
      ).code,
    ).toBe(409);
  });

  it('stores and returns values of a custom property on records', async () => {
    const { client } = await harness.createPortal();
    const contact = await client.crm.contacts.basicApi.create({ properties: { email: 'v@example.com' } });
    await client.crm.contacts.batchApi.update({
      inputs: [{ id: contact.id, properties: { syncline_last_contacted: '2026-11-28T08:30:00.000Z' } }],
    });
    const read = await client.crm.contacts.basicApi.getById(contact.id, ['syncline_last_contacted']);
    expect(read.properties.syncline_last_contacted).toBe('2026-11-28T08:30:00.000Z');
    const all = await client.crm.contacts.basicApi.getById(contact.id);
    // Not among the default properties of a read that names none.
    expect(all.properties).not.toHaveProperty('syncline_last_contacted');
  });
});
