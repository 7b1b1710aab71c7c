import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AssociationTypeDef } from './associations';
import { authOf } from './data-plane.hooks';
import { describeStoreError, standardError, storeErrorToHttp, validationError } from './errors';
import type { ObjectTypeDef, ObjectTypeName } from './object-types';
import type { Portal } from './portal';
import { batchInputs, bodyObject, intParam, objectTypeOf } from './route-helpers';

type PairParams = { objectType: string; objectId: string; toObjectType: string; toObjectId: string };

/** `{ category, typeId, label }`; HubSpot's unlabelled default has no label (left out, not null). */
function specWithLabel(def: AssociationTypeDef) {
  return { category: def.category, typeId: def.typeId, ...(def.label === null ? {} : { label: def.label }) };
}

/** What `GET …/associations/{toType}` lists: live targets only, with every type between the pair. */
function associatedObjects(portal: Portal, from: ObjectTypeName, fromId: string, to: ObjectTypeName) {
  const record = portal.stores[from].get(fromId);
  if (!record) return [];
  return portal.associations
    .list(from, record.id, to)
    .filter((edge) => portal.stores[to].get(edge.toId))
    .map((edge) => ({
      toObjectId: edge.toId,
      associationTypes: edge.typeIds
        .map((id) => portal.associationTypes.get(id))
        .filter((d): d is AssociationTypeDef => d !== undefined)
        .map(specWithLabel),
    }));
}

/** The labels now between two records (`LabelsBetweenObjectPair`). */
function labelsBetween(portal: Portal, from: ObjectTypeDef, fromId: string, to: ObjectTypeDef, toId: string) {
  const edge = portal.associations.list(from.name, fromId, to.name).find((e) => e.toId === toId);
  const labels = (edge?.typeIds ?? [])
    .map((id) => portal.associationTypes.get(id)?.label)
    .filter((l): l is string => typeof l === 'string');
  return {
    fromObjectTypeId: from.typeId,
    fromObjectId: fromId,
    toObjectTypeId: to.typeId,
    toObjectId: toId,
    labels,
  };
}

/** Type ids from `[{ associationCategory, associationTypeId }]`, each checked against the pair. */
function typeIdsOf(portal: Portal, from: ObjectTypeDef, to: ObjectTypeDef, raw: unknown): number[] {
  if (!Array.isArray(raw) || raw.length === 0)
    throw validationError('Invalid input JSON: expected association types.');
  return raw.map((spec: { associationCategory?: unknown; associationTypeId?: unknown }) => {
    const typeId = Number(spec?.associationTypeId);
    const def = portal.associationTypes.get(typeId);
    if (!def || def.from !== from.name || def.to !== to.name || def.category !== spec?.associationCategory) {
      throw validationError(
        `${String(spec?.associationCategory)} ${String(spec?.associationTypeId)} is not a valid association type from ${from.name} to ${to.name}.`,
      );
    }
    return typeId;
  });
}

function defaultTypeOf(portal: Portal, from: ObjectTypeDef, to: ObjectTypeDef): AssociationTypeDef {
  const def = portal.associationTypes.defaultType(from.name, to.name);
  if (!def) throw validationError(`There is no default association from ${from.name} to ${to.name}.`);
  return def;
}

/**
 * A batch answer. A partial failure is a 207 where the endpoint's published spec has one (batch
 * read and create); batch associate/default has 200 only, its errors in the 200 body.
 */
function batchEnvelope(
  reply: FastifyReply,
  okStatus: number,
  now: () => number,
  results: unknown[],
  errors: unknown[],
  partialStatus = 207,
) {
  const stamp = new Date(now()).toISOString();
  const body: Record<string, unknown> = { status: 'COMPLETE', results };
  if (errors.length > 0) Object.assign(body, { numErrors: errors.length, errors });
  Object.assign(body, { startedAt: stamp, completedAt: stamp });
  return reply.code(errors.length > 0 ? partialStatus : okStatus).send(body);
}

const idOf = (v: unknown): string => String((v as { id?: unknown } | undefined)?.id ?? '');

/** CRM v4 associations: default and labelled, single and batch, and label definitions. */
export function registerAssociationRoutes(api: FastifyInstance, now: () => number): void {
  api.get<{ Params: Omit<PairParams, 'toObjectId'>; Querystring: { limit?: string; after?: string } }>(
    '/crm/v4/objects/:objectType/:objectId/associations/:toObjectType',
    async (req) => {
      const from = objectTypeOf(req.params.objectType);
      const to = objectTypeOf(req.params.toObjectType);
      const { portal } = authOf(req);
      const all = associatedObjects(portal, from.name, req.params.objectId, to.name);
      const limit = Math.max(1, Math.min(intParam(req.query.limit, 'limit', 500), 500));
      const offset = intParam(req.query.after, 'after', 0);
      const body: { results: unknown[]; paging?: { next: { after: string } } } = {
        results: all.slice(offset, offset + limit),
      };
      if (offset + limit < all.length) body.paging = { next: { after: String(offset + limit) } };
      return body;
    },
  );

  api.put<{ Params: PairParams }>(
    '/crm/v4/objects/:objectType/:objectId/associations/default/:toObjectType/:toObjectId',
    async (req, reply) => {
      const from = objectTypeOf(req.params.objectType);
      const to = objectTypeOf(req.params.toObjectType);
      const { portal } = authOf(req);
      const def = defaultTypeOf(portal, from, to);
      const done = portal.associate(
        from.name,
        req.params.objectId,
        to.name,
        req.params.toObjectId,
        [def.typeId],
        portal.integrationSource(),
      );
      if (!done.ok) throw storeErrorToHttp(from, done.error);
      const { fromId, toId } = done.value;
      const results = [
        {
          from: { id: fromId },
          to: { id: toId },
          associationSpec: { associationCategory: def.category, associationTypeId: def.typeId },
        },
        {
          from: { id: toId },
          to: { id: fromId },
          associationSpec: { associationCategory: def.category, associationTypeId: def.inverseTypeId },
        },
      ];
      return batchEnvelope(reply, 200, now, results, []);
    },
  );

  api.put<{ Params: PairParams }>(
    '/crm/v4/objects/:objectType/:objectId/associations/:toObjectType/:toObjectId',
    async (req, reply) => {
      const from = objectTypeOf(req.params.objectType);
      const to = objectTypeOf(req.params.toObjectType);
      const { portal } = authOf(req);
      const typeIds = typeIdsOf(portal, from, to, req.body);
      const done = portal.associate(
        from.name,
        req.params.objectId,
        to.name,
        req.params.toObjectId,
        typeIds,
        portal.integrationSource(),
      );
      if (!done.ok) throw storeErrorToHttp(from, done.error);
      return reply.code(201).send(labelsBetween(portal, from, done.value.fromId, to, done.value.toId));
    },
  );

  api.delete<{ Params: PairParams }>(
    '/crm/v4/objects/:objectType/:objectId/associations/:toObjectType/:toObjectId',
    async (req, reply) => {
      const from = objectTypeOf(req.params.objectType);
      const to = objectTypeOf(req.params.toObjectType);
      const { portal } = authOf(req);
      portal.disassociate(
        from.name,
        req.params.objectId,
        to.name,
        req.params.toObjectId,
        portal.integrationSource(),
      );
      return reply.code(204).send();
    },
  );

  type BatchParams = { fromObjectType: string; toObjectType: string };
  const base = '/crm/v4/associations/:fromObjectType/:toObjectType';

  api.post<{ Params: BatchParams }>(`${base}/batch/read`, async (req, reply) => {
    const from = objectTypeOf(req.params.fromObjectType);
    const to = objectTypeOf(req.params.toObjectType);
    const { portal } = authOf(req);
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const input of batchInputs(req.body, 1000)) {
      const id = String(input.id ?? '');
      const found = associatedObjects(portal, from.name, id, to.name);
      if (found.length > 0) results.push({ from: { id }, to: found });
      else {
        errors.push(
          standardError('OBJECT_NOT_FOUND', `No ${to.singular} is associated with ${from.singular} ${id}.`, {
            fromObjectId: [id],
            toObjectType: [to.singular.toUpperCase()],
          }),
        );
      }
    }
    return batchEnvelope(reply, 200, now, results, errors);
  });

  api.post<{ Params: BatchParams }>(`${base}/batch/create`, async (req, reply) => {
    const from = objectTypeOf(req.params.fromObjectType);
    const to = objectTypeOf(req.params.toObjectType);
    const { portal } = authOf(req);
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const input of batchInputs(req.body, 2000)) {
      let typeIds: number[];
      try {
        typeIds = typeIdsOf(portal, from, to, input.types);
      } catch (e) {
        errors.push(standardError('VALIDATION_ERROR', e instanceof Error ? e.message : String(e)));
        continue;
      }
      const done = portal.associate(
        from.name,
        idOf(input.from),
        to.name,
        idOf(input.to),
        typeIds,
        portal.integrationSource(),
      );
      if (done.ok) results.push(labelsBetween(portal, from, done.value.fromId, to, done.value.toId));
      else {
        const d = describeStoreError(from, done.error);
        errors.push(standardError(d.category, d.message, d.context));
      }
    }
    return batchEnvelope(reply, 201, now, results, errors);
  });

  api.post<{ Params: BatchParams }>(`${base}/batch/associate/default`, async (req, reply) => {
    const from = objectTypeOf(req.params.fromObjectType);
    const to = objectTypeOf(req.params.toObjectType);
    const { portal } = authOf(req);
    const def = defaultTypeOf(portal, from, to);
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const input of batchInputs(req.body, 2000)) {
      const done = portal.associate(
        from.name,
        idOf(input.from),
        to.name,
        idOf(input.to),
        [def.typeId],
        portal.integrationSource(),
      );
      if (done.ok) {
        results.push({
          from: { id: done.value.fromId },
          to: { id: done.value.toId },
          associationSpec: { associationCategory: def.category, associationTypeId: def.typeId },
        });
      } else {
        const d = describeStoreError(from, done.error);
        errors.push(standardError(d.category, d.message, d.context));
      }
    }
    return batchEnvelope(reply, 200, now, results, errors, 200);
  });

  api.post<{ Params: BatchParams }>(`${base}/batch/archive`, async (req, reply) => {
    const from = objectTypeOf(req.params.fromObjectType);
    const to = objectTypeOf(req.params.toObjectType);
    const { portal } = authOf(req);
    for (const input of batchInputs(req.body, 2000)) {
      const targets = Array.isArray(input.to) ? input.to : [];
      for (const target of targets) {
        portal.disassociate(from.name, idOf(input.from), to.name, idOf(target), portal.integrationSource());
      }
    }
    return reply.code(204).send();
  });

  api.post<{ Params: BatchParams }>(`${base}/batch/labels/archive`, async (req, reply) => {
    const from = objectTypeOf(req.params.fromObjectType);
    const to = objectTypeOf(req.params.toObjectType);
    const { portal } = authOf(req);
    for (const input of batchInputs(req.body, 2000)) {
      const typeIds = typeIdsOf(portal, from, to, input.types);
      portal.disassociate(
        from.name,
        idOf(input.from),
        to.name,
        idOf(input.to),
        portal.integrationSource(),
        typeIds,
      );
    }
    return reply.code(204).send();
  });

  api.get<{ Params: BatchParams }>(`${base}/labels`, async (req) => {
    const from = objectTypeOf(req.params.fromObjectType);
    const to = objectTypeOf(req.params.toObjectType);
    const { portal } = authOf(req);
    return { results: portal.associationTypes.between(from.name, to.name).map(specWithLabel) };
  });

  api.post<{ Params: BatchParams }>(`${base}/labels`, async (req) => {
    const from = objectTypeOf(req.params.fromObjectType);
    const to = objectTypeOf(req.params.toObjectType);
    const { portal } = authOf(req);
    const body = bodyObject(req.body);
    if (typeof body.label !== 'string' || typeof body.name !== 'string') {
      throw validationError('Invalid input JSON: label and name are required.');
    }
    const inverse = typeof body.inverseLabel === 'string' ? body.inverseLabel : undefined;
    const defs = portal.associationTypes.defineLabel(from.name, to.name, body.label, body.name, inverse);
    return { results: defs.filter((d) => d.from === from.name).map(specWithLabel) };
  });

  api.delete<{ Params: BatchParams & { associationTypeId: string } }>(
    `${base}/labels/:associationTypeId`,
    async (req, reply) => {
      objectTypeOf(req.params.fromObjectType);
      objectTypeOf(req.params.toObjectType);
      const { portal } = authOf(req);
      portal.associationTypes.removeLabel(Number(req.params.associationTypeId));
      return reply.code(204).send();
    },
  );
}
