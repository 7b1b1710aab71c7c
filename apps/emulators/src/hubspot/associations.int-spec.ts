import type { Client } from '@hubspot/api-client';
import { AssociationSpecAssociationCategoryEnum as Category } from '@hubspot/api-client/lib/codegen/crm/associations/v4';
import { FilterOperatorEnum } from '@hubspot/api-client/lib/codegen/crm/contacts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubspotHarness } from './testing/hubspot-harness';
import { HubspotSchemas } from './testing/hubspot-schemas';

describe('HubSpot emulator: v4 associations through @hubspot/api-client', () => {
  let harness: HubspotHarness;
  let client: Client;
  const ids = { contact: '', company: '', deal: '', other: '' };

  beforeAll(async () => {
    harness = await HubspotHarness.start();
    ({ client } = await harness.createPortal());
    ids.contact = (
      await client.crm.contacts.basicApi.create({ properties: { email: 'a@assoc.test' }, associations: [] })
    ).id;
    ids.company = (
      await client.crm.companies.basicApi.create({ properties: { name: 'Acme' }, associations: [] })
    ).id;
    ids.other = (
      await client.crm.companies.basicApi.create({ properties: { name: 'Other' }, associations: [] })
    ).id;
    ids.deal = (
      await client.crm.deals.basicApi.create({ properties: { dealname: 'Big' }, associations: [] })
    ).id;
  });
  afterAll(async () => {
    await harness.close();
  });

  const v4 = () => client.crm.associations.v4;

  it('creates the default association with the default type ids, readable from both ends', async () => {
    const created = await v4().basicApi.createDefault('contacts', ids.contact, 'companies', ids.company);
    expect(created.results.map((r) => r.associationSpec.associationTypeId).sort((a, b) => a - b)).toEqual([
      279, 280,
    ]);
    const fromContact = await v4().basicApi.getPage('contacts', ids.contact, 'companies');
    expect(fromContact.results).toEqual([
      { toObjectId: ids.company, associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 279 }] },
    ]);
    const fromCompany = await v4().basicApi.getPage('company', ids.company, '0-1');
    expect(fromCompany.results[0]).toMatchObject({
      toObjectId: ids.contact,
      associationTypes: [{ category: 'HUBSPOT_DEFINED', typeId: 280 }],
    });
    await v4().basicApi.createDefault('deals', ids.deal, 'contacts', ids.contact);
    const dealContacts = await v4().basicApi.getPage('deals', ids.deal, 'contacts');
    expect(dealContacts.results[0]?.associationTypes[0]?.typeId).toBe(3);
    const contactDeals = await v4().basicApi.getPage('contacts', ids.contact, 'deals');
    expect(contactDeals.results[0]?.associationTypes[0]?.typeId).toBe(4);
  });

  it('creates labelled associations: Primary (1/2) and a user-defined label', async () => {
    const primary = await v4().basicApi.create('contacts', ids.contact, 'companies', ids.company, [
      { associationCategory: Category.HubspotDefined, associationTypeId: 1 },
    ]);
    expect(primary).toMatchObject({ fromObjectTypeId: '0-1', toObjectTypeId: '0-2', labels: ['Primary'] });
    const page = await v4().basicApi.getPage('contacts', ids.contact, 'companies');
    expect(page.results[0]?.associationTypes).toEqual([
      { category: 'HUBSPOT_DEFINED', typeId: 1, label: 'Primary' },
      { category: 'HUBSPOT_DEFINED', typeId: 279 },
    ]);
    const inverse = await v4().basicApi.getPage('companies', ids.company, 'contacts');
    expect(inverse.results[0]?.associationTypes.map((t) => t.typeId)).toEqual([2, 280]);

    const defined = await v4().schema.definitionsApi.create('contacts', 'companies', {
      label: 'Billing contact',
      name: 'billing_contact',
    });
    const billing = defined.results[0];
    expect(billing).toMatchObject({ category: 'USER_DEFINED', label: 'Billing contact' });
    const labelled = await v4().basicApi.create('contacts', ids.contact, 'companies', ids.other, [
      { associationCategory: Category.UserDefined, associationTypeId: billing?.typeId ?? 0 },
    ]);
    expect(labelled.labels).toEqual(['Billing contact']);

    // A contact has one primary company: a new primary demotes the old one.
    await v4().basicApi.create('contacts', ids.contact, 'companies', ids.other, [
      { associationCategory: Category.HubspotDefined, associationTypeId: 1 },
    ]);
    const after = await v4().basicApi.getPage('contacts', ids.contact, 'companies');
    const primaries = after.results
      .filter((r) => r.associationTypes.some((t) => t.typeId === 1))
      .map((r) => r.toObjectId);
    expect(primaries).toEqual([ids.other]);

    await expect(
      v4().basicApi.create('contacts', ids.contact, 'companies', ids.company, [
        { associationCategory: Category.HubspotDefined, associationTypeId: 4 },
      ]),
    ).rejects.toMatchObject({ code: 400 });
  });

  it('shows associations on v3 reads with the associations parameter', async () => {
    const read = await client.crm.contacts.basicApi.getById(ids.contact, undefined, undefined, [
      'companies',
      'deals',
    ]);
    const companies = read.associations?.companies?.results ?? [];
    expect(companies).toEqual(
      expect.arrayContaining([
        { id: ids.company, type: 'contact_to_company_unlabeled' },
        { id: ids.other, type: 'contact_to_company' },
      ]),
    );
    expect(read.associations?.deals?.results).toEqual([{ id: ids.deal, type: 'contact_to_deal' }]);
  });

  it('associates on create, in batches, and removes', async () => {
    const deal = await client.crm.deals.basicApi.create({
      properties: { dealname: 'With company' },
      associations: [
        {
          to: { id: ids.company },
          types: [{ associationCategory: Category.HubspotDefined, associationTypeId: 341 }],
        },
      ],
    });
    const dealCompanies = await v4().basicApi.getPage('deals', deal.id, 'companies');
    expect(dealCompanies.results.map((r) => r.toObjectId)).toEqual([ids.company]);

    const batch = await v4().batchApi.create('deals', 'contacts', {
      inputs: [
        {
          _from: { id: deal.id },
          to: { id: ids.contact },
          types: [{ associationCategory: Category.HubspotDefined, associationTypeId: 3 }],
        },
      ],
    });
    expect(batch.results).toHaveLength(1);
    const read = await v4().batchApi.getPage('deals', 'contacts', { inputs: [{ id: deal.id }, { id: '1' }] });
    expect(read.results.map((r) => r._from.id)).toEqual([deal.id]);
    expect('numErrors' in read && read.numErrors).toBe(1);

    await v4().basicApi.archive('deals', deal.id, 'companies', ids.company);
    expect((await v4().basicApi.getPage('deals', deal.id, 'companies')).results).toEqual([]);
    expect((await v4().basicApi.getPage('companies', ids.company, 'deals')).results).toEqual([]);
  });

  it('associates with the default type and removes, in batches (the v4 batch associate/default and archive)', async () => {
    const contact = await client.crm.contacts.basicApi.create({
      properties: { email: 'batch@assoc.test' },
      associations: [],
    });
    const made = await v4().batchApi.createDefault('contacts', 'companies', {
      inputs: [
        { _from: { id: contact.id }, to: { id: ids.company } },
        { _from: { id: contact.id }, to: { id: ids.other } },
      ],
    });
    expect(made.status).toBe('COMPLETE');
    expect(made.results.map((r) => [r._from.id, r.to.id, r.associationSpec.associationTypeId])).toEqual([
      [contact.id, ids.company, 279],
      [contact.id, ids.other, 279],
    ]);
    // Again: nothing new, and no error (associating is idempotent).
    await v4().batchApi.createDefault('contacts', 'companies', {
      inputs: [{ _from: { id: contact.id }, to: { id: ids.company } }],
    });
    const listed = await v4().basicApi.getPage('contacts', contact.id, 'companies');
    expect(listed.results.map((r) => r.toObjectId).sort()).toEqual([ids.company, ids.other].sort());
    // An engagement with its contact, as Syncline associates the mails it writes.
    const email = await client.crm.objects.emails.basicApi.create({
      properties: { hs_timestamp: '2026-11-20T09:00:00.000Z', hs_email_subject: 'Hello' },
      associations: [],
    });
    const engaged = await v4().batchApi.createDefault('emails', 'contacts', {
      inputs: [{ _from: { id: email.id }, to: { id: contact.id } }],
    });
    expect(engaged.results[0]?.associationSpec.associationTypeId).toBe(198);
    expect(
      (await v4().basicApi.getPage('contacts', contact.id, 'emails')).results.map((r) => r.toObjectId),
    ).toEqual([email.id]);
    // A record that does not exist: named in the errors of a 200 (the spec has no 207 here), the rest applied.
    const partly = await v4().batchApi.createDefault('contacts', 'companies', {
      inputs: [
        { _from: { id: contact.id }, to: { id: '999999999' } },
        { _from: { id: contact.id }, to: { id: ids.other } },
      ],
    });
    expect([partly.numErrors, partly.errors?.[0]?.category, partly.results.length]).toEqual([
      1,
      'OBJECT_NOT_FOUND',
      1,
    ]);

    await v4().batchApi.archive('contacts', 'companies', {
      inputs: [{ _from: { id: contact.id }, to: [{ id: ids.company }, { id: ids.other }] }],
    });
    expect((await v4().basicApi.getPage('contacts', contact.id, 'companies')).results).toEqual([]);
    expect(
      (await v4().basicApi.getPage('companies', ids.other, 'contacts')).results.map((r) => r.toObjectId),
    ).not.toContain(contact.id);
    // Archiving what is not there is no error either.
    await v4().batchApi.archive('contacts', 'companies', {
      inputs: [{ _from: { id: contact.id }, to: [{ id: ids.company }] }],
    });
  });

  it('moves the modified date of both records when an association changes, so a search finds them', async () => {
    const contact = await client.crm.contacts.basicApi.create({
      properties: { email: 'touched@assoc.test' },
      associations: [],
    });
    const company = await client.crm.companies.basicApi.create({
      properties: { name: 'Touched' },
      associations: [],
    });
    const before = (await client.crm.contacts.basicApi.getById(contact.id)).updatedAt.getTime();
    await new Promise((r) => setTimeout(r, 5));
    await v4().basicApi.createDefault('contacts', contact.id, 'companies', company.id);
    const after = await client.crm.contacts.basicApi.getById(contact.id, ['lastmodifieddate']);
    expect(after.updatedAt.getTime()).toBeGreaterThan(before);
    expect(Date.parse(after.properties.lastmodifieddate ?? '')).toBe(after.updatedAt.getTime());
    const companyAfter = await client.crm.companies.basicApi.getById(company.id);
    expect(companyAfter.updatedAt.getTime()).toBe(after.updatedAt.getTime());
    const found = await client.crm.contacts.searchApi.doSearch({
      filterGroups: [
        {
          filters: [
            {
              propertyName: 'lastmodifieddate',
              operator: FilterOperatorEnum.Gte,
              value: String(after.updatedAt.getTime()),
            },
          ],
        },
      ],
      limit: 10,
    });
    expect(found.results.map((r) => r.id)).toContain(contact.id);
    // Removing it moves the date again; an add of what is already there changes nothing.
    await v4().basicApi.createDefault('contacts', contact.id, 'companies', company.id);
    expect((await client.crm.contacts.basicApi.getById(contact.id)).updatedAt.getTime()).toBe(
      after.updatedAt.getTime(),
    );
    await new Promise((r) => setTimeout(r, 5));
    await v4().basicApi.archive('contacts', contact.id, 'companies', company.id);
    expect((await client.crm.contacts.basicApi.getById(contact.id)).updatedAt.getTime()).toBeGreaterThan(
      after.updatedAt.getTime(),
    );
  });

  it('moves associations to the survivor of a merge', async () => {
    const keep = await client.crm.companies.basicApi.create({
      properties: { name: 'Keep' },
      associations: [],
    });
    const drop = await client.crm.companies.basicApi.create({
      properties: { name: 'Drop' },
      associations: [],
    });
    await v4().basicApi.createDefault('companies', drop.id, 'contacts', ids.contact);
    await client.crm.companies.basicApi.merge({ primaryObjectId: keep.id, objectIdToMerge: drop.id });
    const page = await v4().basicApi.getPage('companies', keep.id, 'contacts');
    expect(page.results.map((r) => r.toObjectId)).toEqual([ids.contact]);
  });

  it('answers every request above with bodies that match the published schemas', () => {
    const { checked, failures } = new HubspotSchemas().checkAll(harness.responses);
    expect(
      failures.map((f) => `${f.response.method} ${f.response.path} ${f.response.status}: ${f.errors}`),
    ).toEqual([]);
    expect(checked.length).toBeGreaterThan(20);
  });
});
