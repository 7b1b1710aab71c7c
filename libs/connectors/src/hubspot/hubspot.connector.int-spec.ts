import { randomUUID } from 'node:crypto';
import type { SourceChangeInput } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import type { ConnectionContext, PushWrite } from '../contract/connector';
import { drain } from '../contract/contract-suite';
import { hubspotConnector } from './hubspot.connector';
import { hubspotTestPortals, TEST_APP_ID } from './testing/hubspot-test-portals';

/** HubSpot specifics beyond the shared contract: batching, all object types, webhook keys, the search cap. */
describe('hubspot connector against the emulator', () => {
  const { control, portal, receiver } = hubspotTestPortals('connectors-hubspot-specific', 8_000);

  it('writes every object type in batches of at most 100, idempotently, and updates and archives them', async () => {
    const { ctx, requests, base } = await portal();
    const deals: PushWrite[] = Array.from({ length: 150 }, (_, i) => ({
      op: 'create',
      entityType: 'deal',
      fields: { name: `Deal ${i}`, amount: 100 + i, stage: 'appointmentscheduled' },
      idempotencyKey: `k-deal-${i}`,
      entityId: randomUUID(),
    }));
    const others: PushWrite[] = (['person', 'company', 'meeting', 'task', 'email_activity'] as const).map(
      (t, i) => ({
        op: 'create',
        entityType: t,
        fields:
          t === 'person'
            ? { email: 'Mixed.Case@Example.com', firstName: 'Mixed' }
            : t === 'company'
              ? { name: 'Acme', domain: 'acme.test' }
              : t === 'meeting'
                ? { title: 'Kickoff', startAt: '2026-12-01T10:00:00.000Z' }
                : t === 'task'
                  ? { title: 'Call back', status: 'open' }
                  : { subject: 'Hello', direction: 'outbound' },
        idempotencyKey: `k-${t}-${i}`,
        entityId: randomUUID(),
      }),
    );
    const created = await hubspotConnector.push(ctx, [...deals, ...others]);
    if (!created.ok) throw new Error(created.error.message);
    expect(created.value.map((r) => r.idempotencyKey)).toEqual(
      [...deals, ...others].map((w) => w.idempotencyKey),
    );
    const upserts = (await requests()).filter((r) => r.path.includes('/batch/upsert'));
    expect(upserts.map((r) => r.path.split('?')[0])).toEqual([
      '/crm/v3/objects/deals/batch/upsert',
      '/crm/v3/objects/deals/batch/upsert',
      '/crm/v3/objects/contacts/batch/upsert',
      '/crm/v3/objects/companies/batch/upsert',
      '/crm/v3/objects/meetings/batch/upsert',
      '/crm/v3/objects/tasks/batch/upsert',
      '/crm/v3/objects/emails/batch/upsert',
    ]);
    // The retry of the whole push lands on the same records.
    const again = await hubspotConnector.push(ctx, [...deals, ...others]);
    expect(again.ok && again.value.map((r) => r.externalId)).toEqual(created.value.map((r) => r.externalId));
    const stored = await control<{ results: { id: string; properties: Record<string, string> }[] }>(
      'GET',
      `${base}/objects/deals`,
    );
    expect(stored.results).toHaveLength(150);
    expect(new Set(stored.results.map((r) => r.properties.syncline_id))).toEqual(
      new Set(deals.map((d) => d.entityId)),
    );

    const dealId = created.value[0]!.externalId;
    const companyId = created.value[151]!.externalId;
    const changed = await hubspotConnector.push(ctx, [
      {
        op: 'update',
        entityType: 'deal',
        externalId: dealId,
        fields: { amount: 999, stage: null },
        idempotencyKey: 'u1',
        entityId: deals[0]!.entityId,
      },
      {
        op: 'delete',
        entityType: 'company',
        externalId: companyId,
        fields: {},
        idempotencyKey: 'd1',
        entityId: others[1]!.entityId,
      },
    ]);
    if (!changed.ok) throw new Error(changed.error.message);
    const deal = (
      await control<{ results: { id: string; properties: Record<string, string | null> }[] }>(
        'GET',
        `${base}/objects/deals`,
      )
    ).results.find((r) => r.id === dealId);
    expect(deal?.properties.amount).toBe('999');
    expect(deal?.properties.dealstage ?? null).toBeNull();
    const companies = await control<{ results: unknown[] }>('GET', `${base}/objects/companies`);
    expect(companies.results).toHaveLength(0);
  });

  it('gives a webhook delete and a pulled delete the same event key, and marks our own writes', async () => {
    const { ctx, base } = await portal(true);
    const backfill = await drain(hubspotConnector, ctx, 'backfill', {});
    const pushed = await hubspotConnector.push(ctx, [
      {
        op: 'create',
        entityType: 'person',
        fields: { email: 'echo@example.test', firstName: 'Echo' },
        idempotencyKey: 'e1',
        entityId: randomUUID(),
      },
    ]);
    if (!pushed.ok) throw new Error(pushed.error.message);
    const id = pushed.value[0]!.externalId;
    await control('DELETE', `${base}/ui/contacts/${id}`);
    const hook = (kind: string) =>
      receiver().waitFor((r) => r.rawBody.includes(`"objectId":${id}`) && r.rawBody.includes(kind));
    const parse = async (kind: string) => {
      const outcome = hubspotConnector.parseWebhook(await hook(kind), {
        connectionId: ctx.connectionId,
        workspaceId: ctx.workspaceId,
        appId: String(TEST_APP_ID),
      });
      if (!outcome.ok || outcome.value.kind !== 'changes') throw new Error('no changes');
      return outcome.value.changes.filter((c) => c.externalId === id);
    };
    const created = await parse('contact.propertyChange');
    expect(created.some((c) => c.origin?.ours === true && c.origin.changeSource === 'INTEGRATION')).toBe(
      true,
    );
    const deletion = (await parse('contact.deletion')).find((c) => c.op === 'delete')!;
    expect(deletion.origin).toMatchObject({ changeSource: 'CRM_UI', ours: false });
    const pulled = await drain(hubspotConnector, ctx, 'pull', backfill.cursor);
    const tombstone = pulled.changes.find((c) => c.externalId === id && c.op === 'delete');
    expect(tombstone?.eventKey).toBe(deletion.eventKey);
  });

  it('carries associations: with the backfill list, by v4 batch read in a pull, and notified by webhook', async () => {
    const { ctx, base, requests } = await portal(true);
    const make = async (type: string, properties: Record<string, string>) =>
      (await control<{ id: string }>('POST', `${base}/ui/${type}`, { properties })).id;
    const contact = await make('contacts', { email: 'assoc@example.test', firstName: 'Assoc' });
    const loner = await make('contacts', { email: 'loner@example.test' });
    const acme = await make('companies', { name: 'Acme', domain: 'acme.test' });
    const other = await make('companies', { name: 'Other', domain: 'other.test' });
    const deal = await make('deals', { dealname: 'Big one' });
    const associate = (from: string, fromId: string, to: string, toId: string) =>
      control('PUT', `${base}/ui/associations/${from}/${fromId}/${to}/${toId}`, {});
    await associate('contacts', contact, 'companies', acme);
    await associate('deals', deal, 'contacts', contact);
    await associate('deals', deal, 'companies', acme);

    const latest = (changes: SourceChangeInput[], id: string) =>
      changes.filter((c) => c.externalId === id).at(-1);
    const mark = (await requests()).length;
    const backfill = await drain(hubspotConnector, ctx, 'backfill', {});
    expect(latest(backfill.changes, contact)?.fields?.associations).toEqual({ company: [acme] });
    // Asked for and none: an empty list (the record has none), not "unknown".
    expect(latest(backfill.changes, loner)?.fields?.associations).toEqual({ company: [] });
    expect(latest(backfill.changes, deal)?.fields?.associations).toEqual({
      person: [contact],
      company: [acme],
    });
    // A company carries none itself (its contacts say the pair); nor do engagements.
    expect(latest(backfill.changes, acme)?.fields).not.toHaveProperty('associations');
    const backfillCalls = (await requests()).slice(mark).map((r) => `${r.method} ${r.path.split('?')[0]}`);
    expect(backfillCalls.filter((c) => c.includes('/crm/v4/'))).toEqual([]);
    expect(
      (await requests()).slice(mark).find((r) => r.path.startsWith('/crm/v3/objects/deals?'))?.path,
    ).toMatch(
      /associations=contacts.*associations=companies|associations=contacts%2Ccompanies|associations=contacts,companies/,
    );

    await new Promise((r) => setTimeout(r, 5));
    await associate('contacts', contact, 'companies', other);
    await control('DELETE', `${base}/ui/associations/deals/${deal}/companies/${acme}`);
    const hook = await receiver().waitFor(
      (r) => r.rawBody.includes('associationChange') && r.rawBody.includes(`"toObjectId":${other}`),
    );
    const parsed = hubspotConnector.parseWebhook(hook, {
      connectionId: ctx.connectionId,
      workspaceId: ctx.workspaceId,
      appId: String(TEST_APP_ID),
    });
    if (!parsed.ok || parsed.value.kind !== 'changes') throw new Error('no changes');
    const notice = parsed.value.changes.find((c) => c.externalId === contact);
    expect(notice).toMatchObject({
      entityType: 'person',
      op: 'upsert',
      fields: {},
      origin: { associationChange: true, partial: true, changeSource: 'CRM_UI' },
    });
    // The company's side of the same pair is the same notice, of the contact.
    expect(parsed.value.changes.filter((c) => c.externalId === other)).toEqual([]);

    const before = (await requests()).length;
    const pulled = await drain(hubspotConnector, ctx, 'pull', backfill.cursor);
    const contactNow = latest(pulled.changes, contact);
    expect(contactNow?.fields?.associations).toEqual({
      company: [acme, other].sort((a, b) => a.length - b.length || (a < b ? -1 : 1)),
    });
    expect(contactNow?.eventKey).not.toBe(latest(backfill.changes, contact)?.eventKey);
    expect(latest(pulled.changes, deal)?.fields?.associations).toEqual({ person: [contact], company: [] });
    const pullCalls = (await requests()).slice(before).map((r) => `${r.method} ${r.path.split('?')[0]}`);
    // One batch read per searched page and associated type, not one call per record.
    expect(pullCalls.filter((c) => c.includes('/crm/v4/')).sort()).toEqual([
      'POST /crm/v4/associations/contacts/companies/batch/read',
      'POST /crm/v4/associations/deals/companies/batch/read',
      'POST /crm/v4/associations/deals/contacts/batch/read',
    ]);
  });

  it('associates and removes associations through the v4 batch endpoints, per pair of types, 100 at a time', async () => {
    const { ctx, requests, base } = await portal();
    const make = async (type: string, properties: Record<string, string>) =>
      (await control<{ id: string }>('POST', `${base}/ui/${type}`, { properties })).id;
    const company = await make('companies', { name: 'Batch Co' });
    const contacts = await Promise.all(
      Array.from({ length: 120 }, (_, i) => make('contacts', { email: `p${i}@batch.example` })),
    );
    const deal = await make('deals', { dealname: 'Batch deal' });
    const email = await make('emails', { hs_email_subject: 'Hi', hs_timestamp: '2026-11-20T09:00:00.000Z' });
    const push = hubspotConnector.pushAssociations!;
    const done = await push(ctx, [
      ...contacts.map((id, i) => ({
        op: 'associate' as const,
        fromType: 'person' as const,
        fromId: id,
        toType: 'company' as const,
        toId: company,
        idempotencyKey: `k${i}`,
      })),
      {
        op: 'associate',
        fromType: 'deal',
        fromId: deal,
        toType: 'person',
        toId: contacts[0]!,
        idempotencyKey: 'd',
      },
      {
        op: 'associate',
        fromType: 'email_activity',
        fromId: email,
        toType: 'person',
        toId: contacts[0]!,
        idempotencyKey: 'e',
      },
    ]);
    expect(done.ok).toBe(true);
    type Listed = { results: { id: string; associations?: Record<string, { results: { id: string }[] }> }[] };
    const associated = async (type: string, id: string, to: string) =>
      (await control<Listed>('GET', `${base}/objects/${type}`)).results
        .find((r) => r.id === id)
        ?.associations?.[to]?.results.map((r) => r.id) ?? [];
    expect(new Set(await associated('companies', company, 'contacts')).size).toBe(120);
    expect(await associated('deals', deal, 'contacts')).toContain(contacts[0]);
    expect(await associated('emails', email, 'contacts')).toContain(contacts[0]);
    const calls = (await requests()).filter((r) => r.path.includes('/batch/associate/default'));
    expect(calls.map((r) => `${r.path} ${r.status}`)).toEqual([
      '/crm/v4/associations/contacts/companies/batch/associate/default 200',
      '/crm/v4/associations/contacts/companies/batch/associate/default 200',
      '/crm/v4/associations/deals/contacts/batch/associate/default 200',
      '/crm/v4/associations/emails/contacts/batch/associate/default 200',
    ]);

    const removed = await push(ctx, [
      {
        op: 'dissociate',
        fromType: 'person',
        fromId: contacts[0]!,
        toType: 'company',
        toId: company,
        idempotencyKey: 'x',
      },
    ]);
    expect(removed.ok).toBe(true);
    expect(await associated('companies', company, 'contacts')).not.toContain(contacts[0]);
    // A record that is gone: refused, not retried as it is.
    const refused = await push(ctx, [
      {
        op: 'associate',
        fromType: 'person',
        fromId: contacts[1]!,
        toType: 'company',
        toId: '987654321',
        idempotencyKey: 'y',
      },
    ]);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('NotFound');
  });

  it('maps a custom property through the connection field mappings, in backfill, webhooks and writes', async () => {
    const { ctx, base } = await portal(true);
    const mapped: ConnectionContext = {
      ...ctx,
      fieldMappings: { 'person.leadScore': 'lead_score', 'person.phone': 'mobilephone' },
    };
    const created = await control<{ id: string }>('POST', `${base}/ui/contacts`, {
      properties: {
        email: 'mapped@example.com',
        lead_score: '42',
        mobilephone: '+44 20 7946 0000',
        phone: '111',
      },
    });
    const backfill = await drain(hubspotConnector, mapped, 'backfill', {});
    const person = backfill.changes.find((c) => c.externalId === created.id)!;
    expect(person.fields).toMatchObject({
      email: 'mapped@example.com',
      leadScore: '42',
      phone: '+44 20 7946 0000',
    });
    // Without the mappings the same record has neither custom field nor the moved phone.
    const plain = (await drain(hubspotConnector, ctx, 'backfill', {})).changes.find(
      (c) => c.externalId === created.id,
    )!;
    expect(plain.fields ?? {}).not.toHaveProperty('leadScore');
    expect(plain.fields?.phone).toBe('111');

    await control('PATCH', `${base}/ui/contacts/${created.id}`, { properties: { lead_score: '77' } });
    const hook = await receiver().waitFor(
      (r) => r.rawBody.includes(`"objectId":${created.id}`) && r.rawBody.includes('"propertyValue":"77"'),
    );
    const outcome = hubspotConnector.parseWebhook(hook, {
      connectionId: ctx.connectionId,
      workspaceId: ctx.workspaceId,
      fieldMappings: mapped.fieldMappings,
    });
    if (!outcome.ok || outcome.value.kind !== 'changes') throw new Error('no changes');
    const ofRecord = outcome.value.changes.filter((c) => c.externalId === created.id).map((c) => c.fields);
    expect(ofRecord).toContainEqual({ leadScore: '77' });

    const pushed = await hubspotConnector.push(mapped, [
      {
        op: 'update',
        entityType: 'person',
        externalId: created.id,
        fields: { leadScore: 90 },
        idempotencyKey: 'map-1',
        entityId: randomUUID(),
      },
    ]);
    if (!pushed.ok) throw new Error(pushed.error.message);
    const state = await control<{ results: { id: string; properties: Record<string, string> }[] }>(
      'GET',
      `${base}/objects/contacts`,
    );
    expect(state.results.find((r) => r.id === created.id)?.properties.lead_score).toBe('90');
  });

  it('checks expectedVersion with one batch read before writing: stale → Conflict, gone → NotFound, nothing applied', async () => {
    const { ctx, requests, base } = await portal();
    const entity = { deal: randomUUID(), company: randomUUID() };
    const created = await hubspotConnector.push(ctx, [
      {
        op: 'create',
        entityType: 'deal',
        fields: { name: 'Versioned', amount: 1 },
        idempotencyKey: 'c-deal',
        entityId: entity.deal,
      },
      {
        op: 'create',
        entityType: 'company',
        fields: { name: 'Versioned Co' },
        idempotencyKey: 'c-company',
        entityId: entity.company,
      },
    ]);
    if (!created.ok) throw new Error(created.error.message);
    const [deal, company] = created.value;
    // The receipt's version is the one a backfill reports for the record.
    const seen = (await drain(hubspotConnector, ctx, 'backfill', {})).changes;
    expect(seen.find((c) => c.externalId === deal!.externalId)?.providerVersion).toBe(deal!.providerVersion);
    await new Promise((r) => setTimeout(r, 5));
    await control('PATCH', `${base}/ui/companies/${company!.externalId}`, { properties: { city: 'Oslo' } });
    const state = async () => ({
      deals: (await control<{ results: unknown[] }>('GET', `${base}/objects/deals`)).results,
      companies: (await control<{ results: unknown[] }>('GET', `${base}/objects/companies`)).results,
    });
    const before = await state();
    const mark = (await requests()).length;
    const updateDeal = (key: string, expectedVersion: string | undefined): PushWrite => ({
      op: 'update',
      entityType: 'deal',
      externalId: deal!.externalId,
      fields: { amount: 2 },
      idempotencyKey: key,
      entityId: entity.deal,
      ...(expectedVersion ? { expectedVersion } : {}),
    });
    const deleteCompany = (key: string, expectedVersion: string | undefined): PushWrite => ({
      op: 'delete',
      entityType: 'company',
      externalId: company!.externalId,
      fields: {},
      idempotencyKey: key,
      entityId: entity.company,
      ...(expectedVersion ? { expectedVersion } : {}),
    });
    // The deal is current, the company was edited since: neither is written.
    const refused = await hubspotConnector.push(ctx, [
      updateDeal('u-deal', deal!.providerVersion),
      deleteCompany('d-company', company!.providerVersion),
    ]);
    expect(refused).toEqual({
      ok: false,
      error: {
        code: 'Conflict',
        message: expect.stringContaining(company!.externalId),
        failedKeys: ['d-company'],
        // The company as HubSpot holds it now, mapped as a backfill maps it.
        current: [
          expect.objectContaining({
            workspaceId: ctx.workspaceId,
            connectionId: ctx.connectionId,
            entityType: 'company',
            externalId: company!.externalId,
            op: 'upsert',
            fields: expect.objectContaining({ name: 'Versioned Co', city: 'Oslo' }),
            origin: expect.objectContaining({ synclineId: entity.company }),
          }),
        ],
      },
    });
    expect(await state()).toEqual(before);
    const sent = (await requests()).slice(mark).map((r) => r.path.split('?')[0]);
    expect(sent).toEqual(['/crm/v3/objects/deals/batch/read', '/crm/v3/objects/companies/batch/read']);

    // With the current versions both apply; the update's receipt chains to the next write.
    const companyNow = (await drain(hubspotConnector, ctx, 'backfill', {})).changes.find(
      (c) => c.externalId === company!.externalId,
    )!.providerVersion;
    const applied = await hubspotConnector.push(ctx, [
      updateDeal('u-deal', deal!.providerVersion),
      deleteCompany('d-company', companyNow),
    ]);
    if (!applied.ok) throw new Error(applied.error.message);
    expect(applied.value[0]!.providerVersion).not.toBe(deal!.providerVersion);
    expect((await state()).companies).toEqual([]);
    // A retried delete of a record already gone is done, not refused.
    const retried = await hubspotConnector.push(ctx, [deleteCompany('d-company', companyNow)]);
    expect(retried.ok).toBe(true);

    // An update of a record deleted since: NotFound, naming the write.
    await control('DELETE', `${base}/ui/deals/${deal!.externalId}`);
    const gone = await hubspotConnector.push(ctx, [updateDeal('u-gone', applied.value[0]!.providerVersion)]);
    expect(gone.ok ? 'applied' : [gone.error.code, gone.error.failedKeys]).toEqual(['NotFound', ['u-gone']]);
  });

  it('narrows the search window before the 10,000-result cap and misses nothing', {
    timeout: 120_000,
  }, async () => {
    const { ctx, requests, base } = await portal();
    const backfill = await drain(hubspotConnector, ctx, 'backfill', {});
    await control('POST', `${base}/seed/contacts`, { count: 10_300 });
    const pulled = await drain(hubspotConnector, ctx, 'pull', backfill.cursor);
    const ids = new Set(
      pulled.changes.filter((c: SourceChangeInput) => c.entityType === 'person').map((c) => c.externalId),
    );
    expect(ids.size).toBe(10_300);
    const log = await requests();
    expect(log.filter((r) => r.status === 400 || r.status === 429)).toEqual([]);
  });
});
