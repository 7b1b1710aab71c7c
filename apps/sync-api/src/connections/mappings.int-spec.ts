import { createHmac } from 'node:crypto';
import { Client } from '@hubspot/api-client';
import { type RunningEmulators, startEmulators } from '@syncline/emulators';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiKey, seedWorkspace, startTestApp, type TestApp } from '../testing/test-app';

const PORTAL = 61_234;
const PUBLIC_BASE_URL = 'https://sync.example.test';
const HUBSPOT_SECRET = 'mappings-spec-webhook-secret';

/** A signed HubSpot v3 webhook of one contact property change. */
function propertyChange(objectId: string, propertyName: string, propertyValue: string, eventId: number) {
  const body = JSON.stringify([
    {
      eventId,
      subscriptionId: 7,
      portalId: PORTAL,
      appId: 999,
      occurredAt: Date.now() - 1_000,
      subscriptionType: 'contact.propertyChange',
      attemptNumber: 0,
      objectId: Number(objectId),
      changeSource: 'CRM_UI',
      sourceId: 'userId:1',
      propertyName,
      propertyValue,
    },
  ]);
  const timestamp = String(Date.now());
  const signature = createHmac('sha256', HUBSPOT_SECRET)
    .update(`POST${PUBLIC_BASE_URL}/webhooks/hubspot${body}${timestamp}`, 'utf8')
    .digest('base64');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-hubspot-signature-v3': signature,
      'x-hubspot-request-timestamp': timestamp,
    },
  };
}

interface MappingsBody {
  connectionId: string;
  provider: string;
  externalAccountId: string;
  supportsMappings: boolean;
  version: number;
  mappings: { entityType: string; field: string; property: string }[];
  fields: Record<
    string,
    {
      field: string;
      property: string;
      custom: boolean;
      mapped: boolean;
      source: string;
      defaultProperty: string | null;
      takenBy?: string;
    }[]
  >;
  updatedAt: string | null;
}
interface PropertyListBody {
  connectionId: string;
  externalAccountId: string;
  entityType: string;
  objectType: string;
  properties: {
    name: string;
    label: string;
    type: string;
    groupName: string;
    custom: boolean;
    readOnly: boolean;
    reserved: boolean;
  }[];
  fieldTypes: Record<string, string[]>;
  customFieldTypes: string[];
}
interface ErrorBody {
  error: { code: string; message: string };
}

describe('connection field mappings', () => {
  let emulators: RunningEmulators;
  let t: TestApp;
  let a: { workspaceId: string; adminKey: string };
  let b: { workspaceId: string; adminKey: string };
  let salesKey: string;
  let hubspotId: string;
  let googleId: string;
  let hubspot: Client;

  const call = (
    key: string,
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> =>
    t.app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload ? { payload } : {}) });
  const url = (id: string, rest = '') => `/api/v1/connections/${id}/mappings${rest}`;
  const put = (mappings: object[], ifMatch?: string, id = hubspotId, key = a.adminKey) =>
    call(key, 'PUT', url(id), { mappings }, ifMatch === undefined ? {} : { 'if-match': ifMatch });
  const storedMappings = async (id: string) =>
    (await t.prisma.connection.findUniqueOrThrow({ where: { id } })).fieldMappings;

  beforeAll(async () => {
    emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
    t = await startTestApp('mappings', {
      HUBSPOT_API_BASE_URL: emulators.hubspotUrl,
      GOOGLE_API_ROOT_URL: `${emulators.googleUrl}/`,
      HUBSPOT_CLIENT_SECRET: HUBSPOT_SECRET,
      PUBLIC_BASE_URL,
    });
    a = await seedWorkspace(t.prisma, 'Acme');
    b = await seedWorkspace(t.prisma, 'Globex');
    salesKey = await createApiKey(t.app, a.adminKey, 'sales', 'rep');
    const portal = await fetch(`${emulators.hubspotUrl}/_emulator/hubspot/portals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ portalId: PORTAL, appId: 7302, clientSecret: 'mappings-spec-secret' }),
    });
    const { accessToken } = (await portal.json()) as { accessToken: string };
    hubspot = new Client({ accessToken, basePath: emulators.hubspotUrl });
    // Custom properties, as a portal admin makes them in HubSpot.
    for (const [objectType, name, type] of [
      ['contacts', 'lead_score', 'string'],
      ['contacts', 'lead_score_number', 'number'],
      ['deals', 'amount_eur', 'number'],
    ] as const)
      await hubspot.crm.properties.coreApi.create(objectType, {
        name,
        label: name,
        type: type as never,
        fieldType: (type === 'number' ? 'number' : 'text') as never,
        groupName: 'custom',
      });
    const created = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: String(PORTAL),
      credentials: { accessToken },
    });
    expect(created.statusCode).toBe(201);
    hubspotId = created.json<{ id: string }>().id;
    // A Google user of the emulator, whose token proves the address.
    const ada = await fetch(`${emulators.googleUrl}/_emulator/google/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.test' }),
    });
    const google = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'google-calendar',
      externalAccountId: 'ada@example.test',
      credentials: { accessToken: ((await ada.json()) as { accessToken: string }).accessToken },
    });
    expect(google.statusCode, google.body).toBe(201);
    googleId = google.json<{ id: string }>().id;
  });
  afterAll(async () => {
    await t?.close();
    await emulators?.close();
  });

  it('reads the defaults at version 0: every field in force and its property, each mapped', async () => {
    const res = await call(a.adminKey, 'GET', url(hubspotId));
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"0"');
    const body = res.json<MappingsBody>();
    expect(body).toMatchObject({
      connectionId: hubspotId,
      provider: 'hubspot',
      externalAccountId: String(PORTAL),
      supportsMappings: true,
      version: 0,
      mappings: [],
      updatedAt: null,
    });
    // A default field at its default property is read and written: mapped.
    expect(body.fields.person).toContainEqual({
      field: 'email',
      property: 'email',
      custom: false,
      mapped: true,
      defaultProperty: 'email',
      source: 'default',
    });
    expect(body.fields.deal).toContainEqual({
      field: 'amount',
      property: 'amount',
      custom: false,
      mapped: true,
      defaultProperty: 'amount',
      source: 'default',
    });
    for (const fields of Object.values(body.fields))
      expect(fields.filter((f) => !f.mapped || f.source !== 'default')).toEqual([]);
  });

  it("lists the portal's properties of a type through its properties API, custom ones included", async () => {
    const res = await call(a.adminKey, 'GET', url(hubspotId, '/properties?entityType=person'));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<PropertyListBody>();
    expect(body).toMatchObject({
      connectionId: hubspotId,
      externalAccountId: String(PORTAL),
      entityType: 'person',
      objectType: 'contacts',
    });
    const byName = new Map(body.properties.map((p) => [p.name, p]));
    expect(byName.get('lead_score')).toEqual({
      name: 'lead_score',
      label: 'lead_score',
      type: 'string',
      groupName: 'custom',
      custom: true,
      readOnly: false,
      reserved: false,
    });
    expect(byName.get('lead_score_number')).toMatchObject({ type: 'number', custom: true });
    expect(byName.get('jobtitle')).toMatchObject({ type: 'string', custom: false, reserved: false });
    // Ids and dates HubSpot or Syncline keep are listed, but no mapping may name them.
    expect(byName.get('hs_object_id')).toMatchObject({ reserved: true });
    expect(byName.get('createdate')).toMatchObject({ reserved: true });
    // Another type's custom property is not among them.
    expect(byName.has('amount_eur')).toBe(false);
    // What each field can use, as a PUT checks it.
    expect(body.fieldTypes.email).toEqual(['string', 'phone_number', 'enumeration']);
    expect(body.customFieldTypes).toEqual(['string', 'phone_number', 'enumeration']);

    const deals = (
      await call(a.adminKey, 'GET', url(hubspotId, '/properties?entityType=deal'))
    ).json<PropertyListBody>();
    expect(deals.objectType).toBe('deals');
    expect(deals.properties.find((p) => p.name === 'amount_eur')).toMatchObject({
      type: 'number',
      custom: true,
    });
    expect(deals.fieldTypes.amount).toEqual(['number']);

    const unknown = await call(a.adminKey, 'GET', url(hubspotId, '/properties?entityType=planet'));
    expect([unknown.statusCode, unknown.json<ErrorBody>().error.code]).toEqual([400, 'validation_failed']);
    const missing = await call(a.adminKey, 'GET', url(hubspotId, '/properties'));
    expect(missing.statusCode).toBe(400);
  });

  it('refuses a property the portal does not have, naming it; nothing is stored', async () => {
    const res = await put([{ entityType: 'person', field: 'leadScore', property: 'lead_scor' }]);
    expect(res.statusCode).toBe(400);
    const { error } = res.json<ErrorBody>();
    expect(error.code).toBe('unknown_property');
    expect(error.message).toContain('person.leadScore');
    expect(error.message).toContain('lead_scor');
    expect(await storedMappings(hubspotId)).toEqual({});
    expect(await t.prisma.connectionMappingRevision.count()).toBe(0);
  });

  it('refuses a property whose type cannot carry the field', async () => {
    // A number property for a custom (text) field, and a text property for the deal amount.
    const res = await put([
      { entityType: 'person', field: 'leadScore', property: 'lead_score_number' },
      { entityType: 'deal', field: 'amount', property: 'dealname' },
    ]);
    expect(res.statusCode).toBe(400);
    const { error } = res.json<ErrorBody>();
    expect(error.code).toBe('property_type_mismatch');
    expect(error.message).toContain('lead_score_number is of type number');
    expect(error.message).toContain(
      'deal.amount: deals property dealname is of type string; amount needs number',
    );
  });

  it('refuses two fields on one property, our own id property, and a field mapped twice', async () => {
    const shared = await put([
      { entityType: 'person', field: 'leadScore', property: 'lead_score' },
      { entityType: 'person', field: 'rating', property: 'lead_score' },
    ]);
    expect([shared.statusCode, shared.json<ErrorBody>().error.code]).toEqual([400, 'property_taken']);
    expect(shared.json<ErrorBody>().error.message).toContain('person.leadScore and person.rating');
    const reserved = await put([{ entityType: 'person', field: 'leadScore', property: 'syncline_id' }]);
    expect([reserved.statusCode, reserved.json<ErrorBody>().error.code]).toEqual([400, 'property_reserved']);
    const twice = await put([
      { entityType: 'person', field: 'leadScore', property: 'lead_score' },
      { entityType: 'person', field: 'leadScore', property: 'company' },
    ]);
    expect([twice.statusCode, twice.json<ErrorBody>().error.code]).toEqual([400, 'validation_failed']);
    expect(await storedMappings(hubspotId)).toEqual({});
  });

  it('replaces the mappings when they fit the portal: versioned, stored where the workers read them, audited', async () => {
    const res = await put(
      [
        { entityType: 'person', field: 'leadScore', property: 'lead_score' },
        { entityType: 'deal', field: 'amount', property: 'amount_eur' },
      ],
      '"0"',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe('"1"');
    const body = res.json<MappingsBody>();
    expect(body.version).toBe(1);
    expect(body.mappings).toEqual([
      { entityType: 'deal', field: 'amount', property: 'amount_eur' },
      { entityType: 'person', field: 'leadScore', property: 'lead_score' },
    ]);
    expect(body.fields.person).toContainEqual({
      field: 'leadScore',
      property: 'lead_score',
      custom: true,
      mapped: true,
      defaultProperty: null,
      source: 'mapping',
    });
    expect(body.fields.person).toContainEqual({
      field: 'email',
      property: 'email',
      custom: false,
      mapped: true,
      defaultProperty: 'email',
      source: 'default',
    });
    expect(body.fields.deal).toContainEqual({
      field: 'amount',
      property: 'amount_eur',
      custom: false,
      mapped: true,
      defaultProperty: 'amount',
      source: 'mapping',
    });
    expect(await storedMappings(hubspotId)).toEqual({
      'person.leadScore': 'lead_score',
      'deal.amount': 'amount_eur',
    });
    expect((await call(a.adminKey, 'GET', url(hubspotId))).json()).toEqual(body);

    const audit = await t.prisma.auditLog.findMany({
      where: { workspaceId: a.workspaceId, action: 'connection.mappings_replaced' },
    });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      targetType: 'connection',
      targetId: hubspotId,
      details: { version: 1, mappings: 'deal.amount=amount_eur, person.leadScore=lead_score' },
    });
    // The custom field is now one of the person's: policies accept it.
    const policies = await call(a.adminKey, 'GET', '/api/v1/policies/person');
    expect(Object.keys(policies.json<{ fields: object }>().fields)).toContain('leadScore');
  });

  it('If-Match: a stale version is 412 and changes nothing; the current one replaces', async () => {
    const stale = await put([], '"0"');
    expect([stale.statusCode, stale.json<ErrorBody>().error.code]).toEqual([412, 'precondition_failed']);
    expect(stale.json<ErrorBody>().error.message).toContain('version 1');
    const malformed = await put([], 'yesterday');
    expect(malformed.statusCode).toBe(400);
    const ok = await put([{ entityType: 'person', field: 'leadScore', property: 'lead_score' }], 'W/"1"');
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json<MappingsBody>().version).toBe(2);
    expect(await storedMappings(hubspotId)).toEqual({ 'person.leadScore': 'lead_score' });
  });

  it('keeps every version as a revision, newest first, paged', async () => {
    const first = await call(a.adminKey, 'GET', url(hubspotId, '/revisions?limit=1'));
    expect(first.statusCode).toBe(200);
    const page = first.json<{
      data: {
        version: number;
        mappings: unknown[];
        changedBy: { kind: string; id: string; keyId: string | null };
      }[];
      nextCursor: string | null;
    }>();
    expect(page.data.map((r) => r.version)).toEqual([2]);
    expect(page.data[0]?.mappings).toEqual([
      { entityType: 'person', field: 'leadScore', property: 'lead_score' },
    ]);
    expect(page.nextCursor).toBe('2');
    const second = await call(
      a.adminKey,
      'GET',
      url(hubspotId, `/revisions?limit=1&cursor=${page.nextCursor}`),
    );
    const rest = second.json<typeof page>();
    expect(rest.data.map((r) => r.version)).toEqual([1]);
    expect(rest.data[0]?.mappings).toHaveLength(2);
    expect(rest.nextCursor).toBeNull();
    const key = await t.prisma.apiKey.findFirstOrThrow({
      where: { workspaceId: a.workspaceId, role: 'admin' },
    });
    expect(rest.data[0]?.changedBy.keyId).toBe(key.id);
  });

  it('is admin only: 403 for a salesperson, reading or writing', async () => {
    for (const [method, path] of [
      ['GET', url(hubspotId)],
      ['GET', url(hubspotId, '/revisions')],
      ['GET', url(hubspotId, '/properties?entityType=person')],
      ['PUT', url(hubspotId)],
    ] as const) {
      const res = await call(salesKey, method, path, method === 'PUT' ? { mappings: [] } : undefined);
      expect([res.statusCode, res.json<ErrorBody>().error.code], `${method} ${path}`).toEqual([
        403,
        'forbidden',
      ]);
    }
  });

  it("another workspace's connection is a 404, and its mappings stay", async () => {
    for (const [method, path] of [
      ['GET', url(hubspotId)],
      ['GET', url(hubspotId, '/revisions')],
      ['GET', url(hubspotId, '/properties?entityType=person')],
      ['PUT', url(hubspotId)],
    ] as const) {
      const res = await call(b.adminKey, method, path, method === 'PUT' ? { mappings: [] } : undefined);
      expect([res.statusCode, res.json<ErrorBody>().error.code], `${method} ${path}`).toEqual([
        404,
        'not_found',
      ]);
      expect(res.body).not.toContain(String(PORTAL));
    }
    expect(await storedMappings(hubspotId)).toEqual({ 'person.leadScore': 'lead_score' });
  });

  it('a Google connection has fixed fields: nothing to map, a mapping is a clear 400', async () => {
    const read = await call(a.adminKey, 'GET', url(googleId));
    expect(read.json<MappingsBody>()).toMatchObject({ supportsMappings: false, fields: {}, mappings: [] });
    const res = await put(
      [{ entityType: 'meeting', field: 'room', property: 'location' }],
      undefined,
      googleId,
    );
    expect([res.statusCode, res.json<ErrorBody>().error.code]).toEqual([400, 'mappings_unsupported']);
    expect(res.json<ErrorBody>().error.message).toContain('google-calendar');
    const properties = await call(a.adminKey, 'GET', url(googleId, '/properties?entityType=meeting'));
    expect([properties.statusCode, properties.json<ErrorBody>().error.code]).toEqual([
      400,
      'mappings_unsupported',
    ]);
  });

  it('a disconnected connection is 409 to a PUT, and still reads', async () => {
    expect((await call(a.adminKey, 'DELETE', `/api/v1/connections/${googleId}`)).statusCode).toBe(200);
    const res = await put([], undefined, googleId);
    expect([res.statusCode, res.json<ErrorBody>().error.code]).toEqual([409, 'connection_disconnected']);
    expect((await call(a.adminKey, 'GET', url(googleId))).statusCode).toBe(200);
  });

  it('a token the portal refuses is 409 credentials_required, not a server error', async () => {
    const emulator = (path: string, body: object) =>
      fetch(`${emulators.hubspotUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await emulator('/_emulator/hubspot/portals', { portalId: 61299, appId: 7302, clientSecret: 'shh' });
    const app = await emulator('/_emulator/hubspot/portals/61299/private-apps', {});
    const created = await call(a.adminKey, 'POST', '/api/v1/connections', {
      provider: 'hubspot',
      externalAccountId: '61299',
      credentials: { privateAppToken: ((await app.json()) as { accessToken: string }).accessToken },
    });
    expect(created.statusCode, created.body).toBe(201);
    // Revoked in HubSpot after it was connected.
    await emulator('/_emulator/faults', {
      service: 'hubspot',
      kind: 'revoke-token',
      account: 61299,
      count: 1,
    });
    const res = await put(
      [{ entityType: 'person', field: 'leadScore', property: 'lead_score' }],
      undefined,
      created.json<{ id: string }>().id,
    );
    expect([res.statusCode, res.json<ErrorBody>().error.code]).toEqual([409, 'credentials_required']);
    const properties = await call(
      a.adminKey,
      'GET',
      url(created.json<{ id: string }>().id, '/properties?entityType=person'),
    );
    expect([properties.statusCode, properties.json<ErrorBody>().error.code]).toEqual([
      409,
      'credentials_required',
    ]);
  });
  it('a webhook is read under the mappings in force at its arrival (no restart)', async () => {
    const webhook = async (value: string, eventId: number) => {
      const { body, headers } = propertyChange('501', 'lead_score', value, eventId);
      const res = await t.app.inject({ method: 'POST', url: '/webhooks/hubspot', headers, payload: body });
      expect(res.statusCode, res.body).toBe(200);
    };
    const leadScores = async () =>
      (
        await t.prisma.changeEvent.findMany({
          where: { connectionId: hubspotId },
          orderBy: { offset: 'asc' },
        })
      )
        .map((e) => (e.fields as Record<string, unknown>).leadScore)
        .filter((v) => v !== undefined);
    expect(await storedMappings(hubspotId)).toEqual({ 'person.leadScore': 'lead_score' });
    await webhook('warm', 1);
    expect(await leadScores()).toEqual(['warm']);
    // Mapped away: the same property's next change no longer carries the field.
    expect((await put([])).statusCode).toBe(200);
    await webhook('hot', 2);
    expect(await leadScores()).toEqual(['warm']);
  });

  it('says which fields are mapped: a default field whose property a mapping took is not, and names who took it', async () => {
    const res = await put([{ entityType: 'person', field: 'leadScore', property: 'jobtitle' }]);
    expect(res.statusCode, res.body).toBe(200);
    const { person } = res.json<MappingsBody>().fields;
    expect(person).toContainEqual({
      field: 'leadScore',
      property: 'jobtitle',
      custom: true,
      mapped: true,
      defaultProperty: null,
      source: 'mapping',
    });
    expect(person).toContainEqual({
      field: 'jobTitle',
      property: 'jobtitle',
      custom: false,
      mapped: false,
      defaultProperty: 'jobtitle',
      source: 'default',
      takenBy: 'leadScore',
    });
    expect(person?.filter((f) => !f.mapped).map((f) => f.field)).toEqual(['jobTitle']);

    // Moved to another property, the default field is mapped there.
    const moved = await put([{ entityType: 'person', field: 'jobTitle', property: 'lead_score' }]);
    expect(moved.json<MappingsBody>().fields.person).toContainEqual({
      field: 'jobTitle',
      property: 'lead_score',
      custom: false,
      mapped: true,
      defaultProperty: 'jobtitle',
      source: 'mapping',
    });
    const defaults = (await put([])).json<MappingsBody>().fields.person;
    expect(defaults).toContainEqual({
      field: 'jobTitle',
      property: 'jobtitle',
      custom: false,
      mapped: true,
      defaultProperty: 'jobtitle',
      source: 'default',
    });
  });
});
