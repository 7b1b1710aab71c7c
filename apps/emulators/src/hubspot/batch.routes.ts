import type { FastifyInstance, FastifyReply } from 'fastify';
import { authOf } from './data-plane.hooks';
import { describeStoreError, standardError, validationError } from './errors';
import type { ObjectTypeDef } from './object-types';
import { createAssociationsOf, findRecord } from './objects.routes';
import type { StoreError } from './record-store';
import { type PublicObject, renderRecord } from './record-view';
import { batchInputs, bodyObject, objectTypeOf, propertiesOf, queryFlag } from './route-helpers';

type TypeParams = { objectType: string };
type BatchError = ReturnType<typeof standardError>;

/**
 * A batch answer: 200 (201 for create) when every input worked, 207 with `numErrors`
 * and `errors` when some did not.
 */
function sendBatch(
  reply: FastifyReply,
  okStatus: number,
  startedAt: string,
  completedAt: string,
  results: unknown[],
  errors: BatchError[],
) {
  const body: Record<string, unknown> = { status: 'COMPLETE', results };
  if (errors.length > 0) {
    body.numErrors = errors.length;
    body.errors = errors;
  }
  body.startedAt = startedAt;
  body.completedAt = completedAt;
  return reply.code(errors.length > 0 ? 207 : okStatus).send(body);
}

function inputError(type: ObjectTypeDef, e: StoreError): BatchError {
  const { category, message, context } = describeStoreError(type, e);
  return standardError(category, message, context);
}

/** Ids must not repeat within one batch (HubSpot refuses the whole batch). */
function refuseDuplicates(ids: string[]): void {
  const seen = new Set<string>();
  const dupes = new Set<string>();
  for (const id of ids) (seen.has(id) ? dupes : seen).add(id);
  if (dupes.size > 0) {
    throw validationError(
      `Duplicate IDs found in batch input: [${[...dupes].join(', ')}]. IDs must be unique`,
      {
        ids: [...dupes],
      },
    );
  }
}

const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** CRM v3 batch routes: read, create, update, upsert, archive (100 inputs at most). */
export function registerBatchRoutes(api: FastifyInstance, now: () => number): void {
  const stamp = () => new Date(now()).toISOString();
  api.post<{ Params: TypeParams; Querystring: { archived?: string } }>(
    '/crm/v3/objects/:objectType/batch/read',
    async (req, reply) => {
      const startedAt = stamp();
      const type = objectTypeOf(req.params.objectType);
      const { portal } = authOf(req);
      const body = bodyObject(req.body);
      const inputs = batchInputs(body);
      const view = {
        properties: stringList(body.properties),
        propertiesWithHistory: stringList(body.propertiesWithHistory),
      };
      const archived = queryFlag(req.query.archived);
      const results = new Map<string, PublicObject>();
      const missing: string[] = [];
      for (const input of inputs) {
        const id = String(input.id ?? '');
        const record = findRecord(portal, type, id, body.idProperty, archived);
        if (record) results.set(record.id, renderRecord(portal, type, record, view));
        else missing.push(id);
      }
      const errors =
        missing.length > 0
          ? [
              standardError(
                'OBJECT_NOT_FOUND',
                `Could not get some ${type.singular.toUpperCase()} objects, they may be deleted or not exist. Check that ids are valid.`,
                { ids: missing },
              ),
            ]
          : [];
      return sendBatch(reply, 200, startedAt, stamp(), [...results.values()], errors);
    },
  );

  api.post<{ Params: TypeParams }>('/crm/v3/objects/:objectType/batch/create', async (req, reply) => {
    const startedAt = stamp();
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    const inputs = batchInputs(req.body);
    const source = portal.integrationSource();
    const results: PublicObject[] = [];
    const errors: BatchError[] = [];
    for (const input of inputs) {
      const properties = propertiesOf(input.properties);
      let associations: ReturnType<typeof createAssociationsOf>;
      try {
        associations = createAssociationsOf(portal, type, input.associations);
      } catch (e) {
        errors.push(standardError('VALIDATION_ERROR', e instanceof Error ? e.message : String(e)));
        continue;
      }
      const created = portal.create(type.name, properties, source);
      if (!created.ok) {
        errors.push(inputError(type, created.error));
        continue;
      }
      const { record } = created.value;
      for (const a of associations) portal.associate(type.name, record.id, a.to, a.toId, a.typeIds, source);
      results.push(renderRecord(portal, type, record, { allProperties: true }));
    }
    return sendBatch(reply, 201, startedAt, stamp(), results, errors);
  });

  api.post<{ Params: TypeParams }>('/crm/v3/objects/:objectType/batch/update', async (req, reply) => {
    const startedAt = stamp();
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    const inputs = batchInputs(req.body);
    refuseDuplicates(inputs.map((i) => String(i.id ?? '')));
    const source = portal.integrationSource();
    const results: PublicObject[] = [];
    const errors: BatchError[] = [];
    for (const input of inputs) {
      const id = String(input.id ?? '');
      const properties = propertiesOf(input.properties);
      const record = findRecord(portal, type, id, input.idProperty);
      if (!record) {
        errors.push(inputError(type, { code: 'NOT_FOUND', id }));
        continue;
      }
      const updated = portal.update(type.name, record.id, properties, source);
      if (updated.ok) results.push(renderRecord(portal, type, updated.value.record, { allProperties: true }));
      else errors.push(inputError(type, updated.error));
    }
    return sendBatch(reply, 200, startedAt, stamp(), results, errors);
  });

  api.post<{ Params: TypeParams }>('/crm/v3/objects/:objectType/batch/upsert', async (req, reply) => {
    const startedAt = stamp();
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    const inputs = batchInputs(req.body);
    const store = portal.stores[type.name];
    for (const input of inputs) {
      const idProperty = String(input.idProperty ?? 'hs_object_id');
      if (!store.isUnique(idProperty)) {
        throw validationError(`${idProperty} is not a unique identifier property for ${type.name}.`, {
          idProperty: [idProperty],
        });
      }
    }
    refuseDuplicates(
      inputs.map((i) => `${String(i.idProperty ?? 'hs_object_id')}:${String(i.id ?? '').toLowerCase()}`),
    );
    const source = portal.integrationSource();
    const results: (PublicObject & { new: boolean })[] = [];
    const errors: BatchError[] = [];
    for (const input of inputs) {
      const id = String(input.id ?? '');
      const idProperty = String(input.idProperty ?? 'hs_object_id');
      const properties = propertiesOf(input.properties);
      const existing = store.findBy(idProperty, id);
      if (existing) {
        const updated = portal.update(type.name, existing.id, properties, source);
        if (updated.ok)
          results.push(
            withNew(renderRecord(portal, type, updated.value.record, { allProperties: true }), false),
          );
        else errors.push(inputError(type, updated.error));
        continue;
      }
      if (idProperty === 'hs_object_id') {
        errors.push(inputError(type, { code: 'NOT_FOUND', id }));
        continue;
      }
      const created = portal.create(type.name, { ...properties, [idProperty]: id }, source);
      if (created.ok)
        results.push(
          withNew(renderRecord(portal, type, created.value.record, { allProperties: true }), true),
        );
      else errors.push(inputError(type, created.error));
    }
    return sendBatch(reply, 200, startedAt, stamp(), results, errors);
  });

  api.post<{ Params: TypeParams }>('/crm/v3/objects/:objectType/batch/archive', async (req, reply) => {
    const type = objectTypeOf(req.params.objectType);
    const { portal } = authOf(req);
    const source = portal.integrationSource();
    for (const input of batchInputs(req.body)) portal.archive(type.name, String(input.id ?? ''), source);
    return reply.code(204).send();
  });
}

/** `new` sits beside the id, as in HubSpot's upsert answers. */
function withNew(object: PublicObject, isNew: boolean): PublicObject & { new: boolean } {
  const { id, ...rest } = object;
  return { id, new: isNew, ...rest };
}
