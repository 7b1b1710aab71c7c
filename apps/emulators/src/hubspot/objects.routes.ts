import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf } from './data-plane.hooks';
import { notFoundError, storeErrorToHttp, validationError } from './errors';
import type { ObjectTypeDef, ObjectTypeName } from './object-types';
import type { Portal } from './portal';
import { isListed, type StoredRecord } from './record-store';
import { associationTypesParam, listParam, type RecordView, renderRecord } from './record-view';
import { bodyObject, intParam, objectTypeOf, propertiesOf, queryFlag } from './route-helpers';

type Query = Record<string, unknown>;
type TypeParams = { objectType: string };
type RecordParams = { objectType: string; objectId: string };

/** An association given with a create: `{ to: { id }, types: [{ associationCategory, associationTypeId }] }`. */
export interface CreateAssociation {
  to: ObjectTypeName;
  toId: string;
  typeIds: number[];
}

/** Checks create-time associations before anything is written, so a bad one writes nothing. */
export function createAssociationsOf(portal: Portal, from: ObjectTypeDef, raw: unknown): CreateAssociation[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw validationError('Invalid input JSON: associations must be an array.');
  return raw.map((entry: { to?: { id?: unknown }; types?: { associationTypeId?: unknown }[] }) => {
    const toId = entry?.to?.id === undefined ? '' : String(entry.to.id);
    const typeIds = (entry?.types ?? []).map((t) => Number(t?.associationTypeId));
    const defs = typeIds.map((id) => portal.associationTypes.get(id));
    const first = defs[0];
    if (!toId || !first || defs.some((d) => !d || d.from !== from.name || d.to !== first.to)) {
      throw validationError(`Invalid association for ${from.singular}: ${JSON.stringify(entry)}`);
    }
    if (!portal.stores[first.to].get(toId)) {
      throw validationError(`The ${first.to} object with id ${toId} does not exist; cannot associate it.`, {
        id: [toId],
      });
    }
    return { to: first.to, toId, typeIds };
  });
}

export function viewOf(query: Query): RecordView {
  return {
    properties: listParam(query.properties),
    propertiesWithHistory: listParam(query.propertiesWithHistory),
    associations: associationTypesParam(query.associations),
  };
}

/** Finds a record by id, or by a unique property when `idProperty` is given (as GET and PATCH allow). */
export function findRecord(
  portal: Portal,
  type: ObjectTypeDef,
  id: string,
  idProperty: unknown,
  archived = false,
): StoredRecord | undefined {
  const store = portal.stores[type.name];
  if (idProperty === undefined || idProperty === '' || idProperty === 'hs_object_id')
    return store.get(id, { archived });
  const property = String(idProperty);
  if (!store.isUnique(property)) throw validationError(`${property} is not a unique identifier property.`);
  return archived ? undefined : store.findBy(property, id);
}

/** CRM v3 single-object routes: list, get, create, update, archive, merge. */
export function registerObjectRoutes(api: FastifyInstance): void {
  api.get<{ Params: TypeParams; Querystring: Query }>('/crm/v3/objects/:objectType', async (req) => {
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    const view = viewOf(req.query);
    // HubSpot lowers the page size when history is asked for.
    const max = view.propertiesWithHistory?.length ? 50 : 100;
    const limit = Math.max(1, Math.min(intParam(req.query.limit, 'limit', 10), max));
    const archived = queryFlag(req.query.archived);
    const after = req.query.after === undefined ? undefined : String(req.query.after);
    if (after !== undefined && !/^\d+$/.test(after)) throw validationError(`Invalid after: ${after}.`);
    const store = portal.stores[type.name];
    const records = store.all();
    const page: StoredRecord[] = [];
    let i = after === undefined ? 0 : store.indexFrom(after);
    for (; i < records.length && page.length < limit; i++) {
      const r = records[i] as StoredRecord;
      if (isListed(r, archived)) page.push(r);
    }
    let next: StoredRecord | undefined;
    for (; i < records.length && !next; i++) {
      const r = records[i] as StoredRecord;
      if (isListed(r, archived)) next = r;
    }
    const body: { results: unknown[]; paging?: { next: { after: string; link: string } } } = {
      results: page.map((r) => renderRecord(portal, type, r, view)),
    };
    if (next) body.paging = { next: { after: next.id, link: nextLink(req, next.id, limit) } };
    return body;
  });

  api.get<{ Params: RecordParams; Querystring: Query }>(
    '/crm/v3/objects/:objectType/:objectId',
    async (req) => {
      const type = objectTypeOf(req.params.objectType);
      const { portal } = authOf(req);
      const record = findRecord(
        portal,
        type,
        req.params.objectId,
        req.query.idProperty,
        queryFlag(req.query.archived),
      );
      if (!record) throw notFoundError();
      return renderRecord(portal, type, record, viewOf(req.query));
    },
  );

  api.post<{ Params: TypeParams }>('/crm/v3/objects/:objectType', async (req, reply) => {
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    const body = bodyObject(req.body);
    const properties = propertiesOf(body.properties);
    const associations = createAssociationsOf(portal, type, body.associations);
    const source = portal.integrationSource();
    const created = portal.create(type.name, properties, source);
    if (!created.ok) throw storeErrorToHttp(type, created.error);
    const { record } = created.value;
    for (const a of associations) portal.associate(type.name, record.id, a.to, a.toId, a.typeIds, source);
    return reply.code(201).send(renderRecord(portal, type, record, { allProperties: true }));
  });

  api.patch<{ Params: RecordParams; Querystring: Query }>(
    '/crm/v3/objects/:objectType/:objectId',
    async (req) => {
      const type = objectTypeOf(req.params.objectType);
      const { portal } = authOf(req);
      const properties = propertiesOf(bodyObject(req.body).properties);
      const record = findRecord(portal, type, req.params.objectId, req.query.idProperty);
      if (!record) throw notFoundError();
      const updated = portal.update(type.name, record.id, properties, portal.integrationSource());
      if (!updated.ok) throw storeErrorToHttp(type, updated.error);
      return renderRecord(portal, type, updated.value.record, { allProperties: true });
    },
  );

  api.delete<{ Params: RecordParams }>('/crm/v3/objects/:objectType/:objectId', async (req, reply) => {
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    // Archiving what is already gone is still a 204 in HubSpot.
    portal.archive(type.name, req.params.objectId, portal.integrationSource());
    return reply.code(204).send();
  });

  api.post<{ Params: TypeParams }>('/crm/v3/objects/:objectType/merge', async (req) => {
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    const body = bodyObject(req.body);
    if (body.primaryObjectId === undefined || body.objectIdToMerge === undefined) {
      throw validationError('Invalid input JSON: primaryObjectId and objectIdToMerge are required.');
    }
    const merged = portal.merge(
      type.name,
      String(body.primaryObjectId),
      String(body.objectIdToMerge),
      portal.integrationSource(),
    );
    if (!merged.ok) throw storeErrorToHttp(type, merged.error);
    return renderRecord(portal, type, merged.value.record, { allProperties: true });
  });

  api.post<{ Params: TypeParams }>('/crm/v3/objects/:objectType/gdpr-delete', async (req, reply) => {
    const type = objectTypeOf(req.params.objectType);
    if (type.name !== 'contacts') throw notFoundError();
    const { portal } = authOf(req);
    const body = bodyObject(req.body);
    const record = findRecord(portal, type, String(body.objectId ?? ''), body.idProperty);
    if (record) portal.archive(type.name, record.id, portal.integrationSource());
    return reply.code(204).send();
  });
}

function nextLink(req: FastifyRequest, after: string, limit: number): string {
  const path = req.url.split('?')[0] ?? '';
  return `${req.protocol}://${req.host}${path}?after=${encodeURIComponent(after)}&limit=${limit}`;
}
