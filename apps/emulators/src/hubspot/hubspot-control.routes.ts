import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { describeStoreError } from './errors';
import type { HubspotState } from './hubspot-state';
import { OBJECT_TYPE_NAMES, OBJECT_TYPES, type ObjectTypeName, resolveObjectType } from './object-types';
import type { Portal } from './portal';
import { isListed, type StoreError, type WriteSource } from './record-store';
import { renderRecord } from './record-view';
import { ACCESS_TOKEN_TTL_SECONDS } from './token-store';

const limitsSchema = z.strictObject({
  per10s: z.number().int().positive().optional(),
  searchPerSecond: z.number().int().positive().optional(),
  windowMs: z.number().int().positive().optional(),
  perDay: z.number().int().positive().optional(),
});

const timingSchema = z.strictObject({
  batchDelayMs: z.number().int().nonnegative().optional(),
  maxBatchSize: z.number().int().min(1).max(100).optional(),
  retryBaseMs: z.number().int().nonnegative().optional(),
  maxRetries: z.number().int().nonnegative().max(20).optional(),
  timeoutMs: z.number().int().positive().optional(),
  held: z.boolean().optional(),
});

const subscriptionSchema = z.strictObject({
  subscriptionType: z.string().regex(/^(contact|company|deal)\.[a-zA-Z]+$/),
  propertyName: z.string().min(1).optional(),
  active: z.boolean().optional(),
});

const settingsShape = {
  webhookUrl: z.url().nullable().optional(),
  limits: limitsSchema.optional(),
  webhookTiming: timingSchema.optional(),
  uniqueProperties: z.partialRecord(z.enum(OBJECT_TYPE_NAMES), z.array(z.string().min(1))).optional(),
  subscriptions: z.array(subscriptionSchema).optional(),
};

const createPortalSchema = z.strictObject({
  portalId: z.coerce.number().int().positive(),
  appId: z.coerce.number().int().positive(),
  clientSecret: z.string().min(1),
  clientId: z.string().min(1).optional(),
  ...settingsShape,
});

const patchPortalSchema = z.strictObject(settingsShape);

const privateAppSchema = z.strictObject({ scopes: z.array(z.string().min(1)).min(1).optional() });

const writeSchema = z.strictObject({
  properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).default({}),
  userId: z.number().int().positive().optional(),
});

const mergeSchema = z.strictObject({
  primaryObjectId: z.coerce.string(),
  objectIdToMerge: z.coerce.string(),
  userId: z.number().int().positive().optional(),
});

const associateSchema = z.strictObject({
  /** Association type ids; absent = the unlabelled default. */
  types: z.array(z.number().int()).optional(),
  userId: z.number().int().positive().optional(),
});

const seedSchema = z.strictObject({
  count: z.number().int().min(1).max(100_000),
  /** Values for every seeded record; `{n}` is replaced by the record's number. */
  properties: z.record(z.string(), z.string()).optional(),
  /** Seeding is setup: no webhooks unless asked. */
  webhooks: z.boolean().optional(),
});

const SEED_TEMPLATES: Record<ObjectTypeName, Record<string, string>> = {
  contacts: { email: 'seed-{n}@example.test', firstname: 'Seed', lastname: 'Contact {n}' },
  companies: { name: 'Seed Company {n}', domain: 'seed-{n}.example.test' },
  deals: {
    dealname: 'Seed Deal {n}',
    amount: '1000',
    dealstage: 'appointmentscheduled',
    pipeline: 'default',
  },
  meetings: { hs_meeting_title: 'Seed meeting {n}' },
  tasks: { hs_task_subject: 'Seed task {n}', hs_task_status: 'NOT_STARTED' },
  emails: { hs_email_subject: 'Seed email {n}' },
};

type PortalParams = { portalId: string };
type TypeParams = PortalParams & { objectType: string };
type RecordParams = TypeParams & { objectId: string };
type PairParams = PortalParams & { from: string; fromId: string; to: string; toId: string };

const fail = (reply: FastifyReply, status: number, error: string, extra: Record<string, unknown> = {}) =>
  reply.code(status).send({ error, ...extra });

const toStrings = (properties: Record<string, string | number | boolean | null>): Record<string, string> =>
  Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v === null ? '' : String(v)]));

export function describePortal(portal: Portal) {
  const { portalId, appId, clientId, webhookUrl, limits, webhookTiming, uniqueProperties, subscriptions } =
    portal.settings;
  return { portalId, appId, clientId, webhookUrl, limits, webhookTiming, uniqueProperties, subscriptions };
}

/**
 * The HubSpot half of the control API, under `/_emulator/hubspot`: portals, writes "as a
 * user in the CRM UI", state inspection without rate limits, bulk seeding, webhook log.
 */
export function registerHubspotControlRoutes(app: FastifyInstance, state: HubspotState): void {
  const base = '/_emulator/hubspot/portals';

  const portalOf = (reply: FastifyReply, raw: string): Portal | undefined => {
    const portal = state.portals.get(Number(raw));
    if (!portal) void fail(reply, 404, `unknown portal ${raw}`);
    return portal;
  };
  const typeOf = (reply: FastifyReply, raw: string): ObjectTypeName | undefined => {
    const type = resolveObjectType(raw)?.name;
    if (!type) void fail(reply, 400, `unknown object type ${raw}`);
    return type;
  };
  const storeFailure = (reply: FastifyReply, type: ObjectTypeName, e: StoreError) => {
    const d = describeStoreError(OBJECT_TYPES[type], e);
    return fail(reply, d.status, d.message, { category: d.category });
  };

  app.post(base, async (req, reply) => {
    const parsed = createPortalSchema.safeParse(req.body);
    if (!parsed.success) return fail(reply, 400, 'invalid portal', { issues: parsed.error.issues });
    const done = state.createPortal(parsed.data);
    if (!done.ok) return fail(reply, 409, `portal ${parsed.data.portalId} has another app installed`);
    const { portal, created, accessToken, refreshToken } = done.value;
    return reply.code(created ? 201 : 200).send({
      portalId: portal.portalId,
      appId: portal.settings.appId,
      clientId: portal.settings.clientId,
      accessToken: accessToken.token,
      refreshToken: refreshToken.token,
      expiresIn: ACCESS_TOKEN_TTL_SECONDS,
    });
  });

  app.get(base, async () => ({ results: [...state.portals.values()].map(describePortal) }));

  app.get<{ Params: PortalParams }>(`${base}/:portalId`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    return portal ? describePortal(portal) : reply;
  });

  app.patch<{ Params: PortalParams }>(`${base}/:portalId`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    if (!portal) return reply;
    const parsed = patchPortalSchema.safeParse(req.body);
    if (!parsed.success) return fail(reply, 400, 'invalid portal settings', { issues: parsed.error.issues });
    state.applySettings(portal, parsed.data);
    return describePortal(portal);
  });

  app.delete<{ Params: PortalParams }>(`${base}/:portalId`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    if (!portal) return reply;
    state.deletePortal(portal.portalId);
    return reply.code(204).send();
  });

  /** A fresh install: new access and refresh tokens (after a revoke-token fault, say). */
  app.post<{ Params: PortalParams }>(`${base}/:portalId/tokens`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    if (!portal) return reply;
    const { accessToken: access, refreshToken: refresh } = state.issueGrant(portal);
    return reply
      .code(201)
      .send({ accessToken: access.token, refreshToken: refresh.token, expiresIn: ACCESS_TOKEN_TTL_SECONDS });
  });

  /** A private app made in the portal's settings: its access token (`pat-na1-…`), which never expires. */
  app.post<{ Params: PortalParams }>(`${base}/:portalId/private-apps`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    if (!portal) return reply;
    const parsed = privateAppSchema.safeParse(req.body ?? {});
    if (!parsed.success) return fail(reply, 400, 'invalid private app', { issues: parsed.error.issues });
    const token = state.issuePrivateAppToken(portal, parsed.data.scopes);
    return reply
      .code(201)
      .send({ portalId: portal.portalId, accessToken: token.token, scopes: token.scopes });
  });

  // ---- A person in the CRM UI: CRM_UI with sourceId userId:<id>; fires webhooks. ----
  app.post<{ Params: TypeParams }>(`${base}/:portalId/ui/:objectType`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    const type = portal && typeOf(reply, req.params.objectType);
    if (!portal || !type) return reply;
    const parsed = writeSchema.safeParse(req.body ?? {});
    if (!parsed.success) return fail(reply, 400, 'invalid write', { issues: parsed.error.issues });
    const created = portal.create(
      type,
      toStrings(parsed.data.properties),
      portal.uiSource(parsed.data.userId),
    );
    if (!created.ok) return storeFailure(reply, type, created.error);
    return reply
      .code(201)
      .send(renderRecord(portal, portal.stores[type].type, created.value.record, { allProperties: true }));
  });

  app.patch<{ Params: RecordParams }>(`${base}/:portalId/ui/:objectType/:objectId`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    const type = portal && typeOf(reply, req.params.objectType);
    if (!portal || !type) return reply;
    const parsed = writeSchema.safeParse(req.body ?? {});
    if (!parsed.success) return fail(reply, 400, 'invalid write', { issues: parsed.error.issues });
    const updated = portal.update(
      type,
      req.params.objectId,
      toStrings(parsed.data.properties),
      portal.uiSource(parsed.data.userId),
    );
    if (!updated.ok) return storeFailure(reply, type, updated.error);
    return renderRecord(portal, portal.stores[type].type, updated.value.record, { allProperties: true });
  });

  app.delete<{ Params: RecordParams; Querystring: { userId?: string } }>(
    `${base}/:portalId/ui/:objectType/:objectId`,
    async (req, reply) => {
      const portal = portalOf(reply, req.params.portalId);
      const type = portal && typeOf(reply, req.params.objectType);
      if (!portal || !type) return reply;
      const userId = req.query.userId === undefined ? undefined : Number(req.query.userId);
      const archived = portal.archive(type, req.params.objectId, portal.uiSource(userId));
      if (!archived.ok) return storeFailure(reply, type, archived.error);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: TypeParams }>(`${base}/:portalId/ui/:objectType/merge`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    const type = portal && typeOf(reply, req.params.objectType);
    if (!portal || !type) return reply;
    const parsed = mergeSchema.safeParse(req.body);
    if (!parsed.success) return fail(reply, 400, 'invalid merge', { issues: parsed.error.issues });
    const { primaryObjectId, objectIdToMerge, userId } = parsed.data;
    const merged = portal.merge(type, primaryObjectId, objectIdToMerge, portal.uiSource(userId));
    if (!merged.ok) return storeFailure(reply, type, merged.error);
    return renderRecord(portal, portal.stores[type].type, merged.value.record, { allProperties: true });
  });

  app.put<{ Params: PairParams }>(
    `${base}/:portalId/ui/associations/:from/:fromId/:to/:toId`,
    async (req, reply) => {
      const portal = portalOf(reply, req.params.portalId);
      const from = portal && typeOf(reply, req.params.from);
      const to = from && typeOf(reply, req.params.to);
      if (!portal || !from || !to) return reply;
      const parsed = associateSchema.safeParse(req.body ?? {});
      if (!parsed.success) return fail(reply, 400, 'invalid association', { issues: parsed.error.issues });
      const typeIds = parsed.data.types ?? [portal.associationTypes.defaultType(from, to)?.typeId ?? -1];
      const done = portal.associate(
        from,
        req.params.fromId,
        to,
        req.params.toId,
        typeIds,
        portal.uiSource(parsed.data.userId),
      );
      if (!done.ok) return storeFailure(reply, from, done.error);
      return {
        fromId: done.value.fromId,
        toId: done.value.toId,
        typeIds:
          portal.associations.list(from, done.value.fromId, to).find((e) => e.toId === done.value.toId)
            ?.typeIds ?? [],
      };
    },
  );

  app.delete<{ Params: PairParams; Querystring: { userId?: string } }>(
    `${base}/:portalId/ui/associations/:from/:fromId/:to/:toId`,
    async (req, reply) => {
      const portal = portalOf(reply, req.params.portalId);
      const from = portal && typeOf(reply, req.params.from);
      const to = from && typeOf(reply, req.params.to);
      if (!portal || !from || !to) return reply;
      const userId = req.query.userId === undefined ? undefined : Number(req.query.userId);
      portal.disassociate(from, req.params.fromId, to, req.params.toId, portal.uiSource(userId));
      return reply.code(204).send();
    },
  );

  // ---- Inspection and setup, outside the rate limits and the request log. ----
  app.get<{ Params: TypeParams; Querystring: { includeArchived?: string } }>(
    `${base}/:portalId/objects/:objectType`,
    async (req, reply) => {
      const portal = portalOf(reply, req.params.portalId);
      const type = portal && typeOf(reply, req.params.objectType);
      if (!portal || !type) return reply;
      const includeArchived = req.query.includeArchived === 'true';
      const def = portal.stores[type].type;
      const results = portal.stores[type]
        .all()
        .filter((r) => isListed(r, false) || (includeArchived && isListed(r, true)))
        .map((r) =>
          renderRecord(portal, def, r, { allProperties: true, associations: [...OBJECT_TYPE_NAMES] }),
        );
      return { results };
    },
  );

  app.post<{ Params: TypeParams }>(`${base}/:portalId/seed/:objectType`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    const type = portal && typeOf(reply, req.params.objectType);
    if (!portal || !type) return reply;
    const parsed = seedSchema.safeParse(req.body);
    if (!parsed.success) return fail(reply, 400, 'invalid seed', { issues: parsed.error.issues });
    const { count, properties, webhooks } = parsed.data;
    const template = properties ?? SEED_TEMPLATES[type];
    const store = portal.stores[type];
    const source: WriteSource = { sourceType: 'IMPORT', sourceId: 'emulator-seed' };
    const start = store.all().length + 1;
    const ids: string[] = [];
    for (let n = start; n < start + count; n++) {
      const values = Object.fromEntries(
        Object.entries(template).map(([k, v]) => [k, v.replaceAll('{n}', String(n))]),
      );
      const created = webhooks
        ? portal.create(type, values, source)
        : store.create(values, source, state.ctx.now());
      if (!created.ok) return storeFailure(reply, type, created.error);
      ids.push(created.value.record.id);
    }
    return reply.code(201).send({ count: ids.length, firstId: ids[0], lastId: ids[ids.length - 1] });
  });

  app.get<{ Params: PortalParams }>(`${base}/:portalId/webhooks`, async (req, reply) => {
    const portal = portalOf(reply, req.params.portalId);
    if (!portal) return reply;
    return { deliveries: state.webhooks.deliveriesOf(portal.portalId), pending: state.webhooks.pending };
  });
}
