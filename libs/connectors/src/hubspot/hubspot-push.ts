import type { Client } from '@hubspot/api-client';
import { err, ok, type SourceChangeInput } from '@syncline/core';
import type {
  AssociationWrite,
  ConnectionContext,
  ConnectorError,
  ConnectorResult,
  PushWrite,
  WriteReceipt,
} from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import {
  type HubspotObjectType,
  type HubspotRecord,
  type ObjectSpec,
  requestedProperties,
  SYNCLINE_ID_PROPERTY,
  specOfEntity,
  specsFor,
  toHubspot,
  toUnified,
  versionOf,
} from './hubspot.mapper';
import { existingIdOf } from './hubspot-conflict';
import { HubspotSession } from './hubspot-session';
import { readAssociations, recordChange } from './hubspot-sync';

const BATCH = 100;

/**
 * Creates go through batch upsert so a retry never makes a second record: contacts on
 * `email` (HubSpot's own unique key, so a contact someone already has is not duplicated),
 * contacts without an email and every other type on our unique `syncline_id`. `syncline_id`
 * is the canonical entity id, not the idempotency key: a retry after the entity changed
 * again (a new key) must still land on the record the first attempt made. A create refused
 * because another record holds one of its unique values names that record (see withExisting).
 * Writes with the app's token come back as INTEGRATION with sourceId = our app id.
 *
 * HubSpot has no conditional writes, so updates and deletes that carry `expectedVersion` are
 * checked first (see checkVersions): one stale write refuses the whole push, before any of
 * it is applied.
 */
export async function pushWrites(
  ctx: ConnectionContext,
  writes: readonly PushWrite[],
): Promise<ConnectorResult<WriteReceipt[]>> {
  const session = new HubspotSession(ctx);
  const specs = specsFor(ctx.fieldMappings);
  const checked = await checkVersions(ctx, session, specs, writes);
  if (!checked.ok) return checked;
  const receipts: WriteReceipt[] = [];
  // Merges first: a later update of the survivor may take a unique value (an email) that only
  // the merged record held until now. HubSpot has no batch merge: one call each.
  for (const write of writes) {
    if (write.op !== 'merge') continue;
    const spec = specOfEntity(write.entityType, specs);
    if (!spec) return err({ code: 'Validation', message: `HubSpot does not write ${write.entityType}` });
    const done = await merge(session, spec, write);
    if (!done.ok) return done;
    receipts.push(done.value);
  }
  for (const group of groupWrites(writes)) {
    const spec = specOfEntity(group.entityType, specs);
    if (!spec) return err({ code: 'Validation', message: `HubSpot does not write ${group.entityType}` });
    // Just before the create, after the updates before it: the survivor's update back to its own
    // address leaves the one it had taken over only where the merge put it, among its secondary
    // addresses, which would refuse the create (checked earlier, it was still the primary one).
    for (const write of group.op === 'create' ? group.writes : []) {
      if (!write.afterProviderMerge) continue;
      const freed = await freeSecondaryEmail(session, write);
      if (!freed.ok) return freed;
    }
    const done =
      group.op === 'create'
        ? await upsert(ctx, session, spec, group.writes, group.idProperty!)
        : group.op === 'update'
          ? await update(session, spec, group.writes)
          : await archive(session, spec, group.writes);
    if (!done.ok) return done;
    receipts.push(...done.value);
  }
  // Receipts in the order the writes were given.
  const order = new Map(writes.map((w, i) => [w.idempotencyKey, i]));
  return ok(receipts.sort((a, b) => (order.get(a.idempotencyKey) ?? 0) - (order.get(b.idempotencyKey) ?? 0)));
}

/**
 * The version check HubSpot does not do for us. Every update and delete that carries
 * `expectedVersion` is batch-read first (up to 100 ids per read, each read taking budget like
 * any call; every property backfill and pull request, so a stale record can be reported whole),
 * and its current version (`versionOf`, the representation backfill and pull report as
 * `providerVersion`) compared with the expected one:
 * - any differs → `Conflict` whose `failedKeys` are the idempotency keys of every stale write,
 *   and whose `current` holds each stale record as it is now, mapped by `recordChange` exactly
 *   as backfill and pull map it (same fields, version and event key; neither reads history);
 * - an update whose record no longer exists (deleted, archived) → `NotFound`, `failedKeys` likewise;
 * a delete whose record is already gone is not refused: its goal is met, and a retried delete
 * that did land must still succeed (the archive below is idempotent).
 * Nothing of the push is applied in either case. Writes without `expectedVersion` are not checked.
 * What remains is the window between this read and the write (milliseconds): HubSpot offers
 * nothing to close it. Two edits in the same millisecond share a version and are not told apart.
 */
async function checkVersions(
  ctx: ConnectionContext,
  session: HubspotSession,
  specs: ReturnType<typeof specsFor>,
  writes: readonly PushWrite[],
): Promise<ConnectorResult<void>> {
  const byType = new Map<ObjectSpec, PushWrite[]>();
  for (const w of writes) {
    // A merge is not computed from the records' values: nothing to be stale against.
    if (w.op === 'create' || w.op === 'merge' || w.expectedVersion === undefined || !w.externalId) continue;
    const spec = specOfEntity(w.entityType, specs);
    if (!spec) return err({ code: 'Validation', message: `HubSpot does not write ${w.entityType}` });
    byType.set(spec, [...(byType.get(spec) ?? []), w]);
  }
  const stale: PushWrite[] = [];
  const gone: PushWrite[] = [];
  const held = new Map<string, SourceChangeInput>();
  for (const [spec, conditional] of byType) {
    const ids = [...new Set(conditional.map((w) => w.externalId!))];
    for (let i = 0; i < ids.length; i += BATCH) {
      const chunk = ids.slice(i, i + BATCH);
      const answer = await session.call('default', (c) =>
        c.crm.objects.batchApi.read(
          spec.objectType,
          {
            inputs: chunk.map((id) => ({ id })),
            // What backfill and pull read (no history either), so `current` maps the same.
            properties: requestedProperties(spec),
            propertiesWithHistory: [],
          },
          false,
        ),
      );
      if (!answer.ok) return answer;
      const current = new Map(answer.value.results.map((r) => [r.id, r as HubspotRecord]));
      // A merged-away id answers as its survivor: pair the single unmatched id and result.
      const unmatchedIds = chunk.filter((id) => !current.has(id));
      const unmatched = answer.value.results.filter((r) => !chunk.includes(r.id));
      if (unmatchedIds.length === 1 && unmatched.length === 1)
        current.set(unmatchedIds[0]!, unmatched[0] as HubspotRecord);
      const staleRecords = new Map<string, HubspotRecord>();
      for (const w of conditional) {
        if (!chunk.includes(w.externalId!)) continue;
        const record = current.get(w.externalId!);
        if (!record) {
          if (w.op === 'update') gone.push(w);
        } else if (versionOf(record) !== w.expectedVersion) {
          stale.push(w);
          staleRecords.set(record.id, record);
        }
      }
      const changes = await changesOf(ctx, session, spec, [...staleRecords.values()]);
      if (!changes.ok) return changes;
      for (const change of changes.value) held.set(`${change.externalId}\u0000${change.eventKey}`, change);
    }
  }
  if (stale.length > 0)
    return err({
      code: 'Conflict',
      message: `HubSpot: ${stale.length} record(s) changed since the version the write was based on (${stale
        .map((w) => w.externalId)
        .join(', ')}); nothing was written`,
      failedKeys: stale.map((w) => w.idempotencyKey),
      current: [...held.values()],
    });
  if (gone.length > 0)
    return err({
      code: 'NotFound',
      message: `HubSpot: record(s) to update no longer exist (${gone.map((w) => w.externalId).join(', ')}); nothing was written`,
      failedKeys: gone.map((w) => w.idempotencyKey),
    });
  return ok(undefined);
}

/** Records as a pull of the same version reports them: with their associations, the same event key. */
async function changesOf(
  ctx: ConnectionContext,
  session: HubspotSession,
  spec: ObjectSpec,
  records: readonly HubspotRecord[],
): Promise<ConnectorResult<SourceChangeInput[]>> {
  const associated = await readAssociations(
    session,
    spec,
    records.map((r) => r.id),
  );
  if (!associated.ok) return associated;
  return ok(records.map((record) => recordChange(ctx, spec, record, associated.value.get(record.id))));
}

interface Group {
  op: PushWrite['op'];
  entityType: PushWrite['entityType'];
  idProperty?: string;
  writes: PushWrite[];
  keys: Set<string>;
}

/** A contact's address, lower-cased as HubSpot keeps it, if the write carries one. */
const emailOf = (w: PushWrite): string | undefined =>
  w.entityType === 'person' && typeof w.fields.email === 'string' && w.fields.email
    ? w.fields.email.toLowerCase()
    : undefined;

/**
 * A create is an upsert on our id: sent again (a retry, a redelivered push), it finds the record
 * it made. Never on the address: a contact already holding it may be another person's record
 * (another entity's, or one whose address was written there moments ago), and an upsert would
 * write this person over it. HubSpot refuses the create instead ("already exists", the address
 * unique), and the sync stage settles on the record it names (linked to the entity, linked to
 * nobody with the same address, or put up for review beside the other person).
 */
const upsertKey = (w: PushWrite): { idProperty: string; id: string } => ({
  idProperty: SYNCLINE_ID_PROPERTY,
  id: w.entityId,
});

/** Batches of ≤100 of one op and type; a repeated id starts a new batch (HubSpot refuses repeats). */
function groupWrites(writes: readonly PushWrite[]): Group[] {
  const groups: Group[] = [];
  for (const w of writes) {
    if (w.op === 'merge' || (w.op !== 'create' && !w.externalId)) continue;
    const { idProperty, id } =
      w.op === 'create' ? upsertKey(w) : { idProperty: undefined, id: w.externalId! };
    let group = groups.findLast(
      (g) => g.op === w.op && g.entityType === w.entityType && g.idProperty === idProperty,
    );
    if (!group || group.writes.length >= BATCH || group.keys.has(id)) {
      group = {
        op: w.op,
        entityType: w.entityType,
        ...(idProperty ? { idProperty } : {}),
        writes: [],
        keys: new Set(),
      };
      groups.push(group);
    }
    group.writes.push(w);
    group.keys.add(id);
  }
  return groups;
}

function receiptOf(spec: ObjectSpec, write: PushWrite, record: HubspotRecord): WriteReceipt {
  return {
    idempotencyKey: write.idempotencyKey,
    externalId: record.id,
    // The version after the write, as pulls report it: the next write's expectedVersion.
    providerVersion: versionOf(record),
    // What a later pull of this content will report, mapped by the same mapper.
    contentHash: contentHash(toUnified(spec, record).fields),
  };
}

async function upsert(
  ctx: ConnectionContext,
  session: HubspotSession,
  spec: ObjectSpec,
  writes: PushWrite[],
  idProperty: string,
): Promise<ConnectorResult<WriteReceipt[]>> {
  const inputs = writes.map((w) => ({
    idProperty,
    id: upsertKey(w).id,
    properties: { ...toHubspot(spec, w.fields), [SYNCLINE_ID_PROPERTY]: w.entityId },
  }));
  const answer = await session.call('default', (c) =>
    c.crm.objects.batchApi.upsert(spec.objectType, { inputs }),
  );
  if (!answer.ok)
    return answer.error.code === 'Conflict'
      ? withExisting(ctx, session, spec, writes, answer.error, answer.error)
      : answer;
  const failed = batchError(answer.value);
  if (failed)
    return failed.code === 'Conflict'
      ? withExisting(ctx, session, spec, writes, failed, firstBatchError(answer.value) ?? failed)
      : err(failed);
  const byKey = new Map<string, HubspotRecord>();
  for (const r of answer.value.results) {
    const key = r.properties[idProperty];
    if (key) byKey.set(key, r as HubspotRecord);
  }
  const receipts: WriteReceipt[] = [];
  for (const w of writes) {
    const record = byKey.get(upsertKey(w).id);
    if (!record)
      return err({ code: 'Transient', message: `HubSpot upsert answered without ${upsertKey(w).id}` });
    receipts.push(receiptOf(spec, w, record));
  }
  return ok(receipts);
}

/**
 * A create HubSpot refused because a record already holds one of its unique values (a contact's
 * address, a declared unique property such as a company's domain, our `syncline_id`), naming it:
 * "… already exists. Existing ID: …". When the call held that one write, the refusal is its own:
 * the record is read as a pull reports it and handed back as `existing`, for the caller to tell
 * whether it is the entity's. Otherwise the refusal stands as it is (the caller splits the batch).
 * A record gone by the time it is read no longer refuses anything: the create may be sent again.
 */
async function withExisting(
  ctx: ConnectionContext,
  session: HubspotSession,
  spec: ObjectSpec,
  writes: readonly PushWrite[],
  error: ConnectorError,
  refusal: { message?: unknown; context?: unknown },
): Promise<ConnectorResult<WriteReceipt[]>> {
  const id = existingIdOf(refusal);
  const write = writes.length === 1 ? writes[0] : undefined;
  if (write === undefined || id === undefined) return err(error);
  const read = await session.call('default', (c) =>
    c.crm.objects.batchApi.read(
      spec.objectType,
      { inputs: [{ id }], properties: requestedProperties(spec), propertiesWithHistory: [] },
      false,
    ),
  );
  if (!read.ok) return read;
  const record = read.value.results[0] as HubspotRecord | undefined;
  if (record === undefined)
    return err({ code: 'Transient', message: `${error.message} (record ${id} is gone since)` });
  const changes = await changesOf(ctx, session, spec, [record]);
  if (!changes.ok) return changes;
  return err({ ...error, existing: { idempotencyKey: write.idempotencyKey, record: changes.value[0]! } });
}

async function update(
  session: HubspotSession,
  spec: ObjectSpec,
  writes: PushWrite[],
): Promise<ConnectorResult<WriteReceipt[]>> {
  const inputs = writes.map((w) => ({ id: w.externalId!, properties: toHubspot(spec, w.fields) }));
  const answer = await session.call('default', (c) =>
    c.crm.objects.batchApi.update(spec.objectType, { inputs }),
  );
  if (!answer.ok) return answer;
  const failed = batchError(answer.value);
  if (failed) return err(failed);
  const byId = new Map(answer.value.results.map((r) => [r.id, r as HubspotRecord]));
  const receipts: WriteReceipt[] = [];
  for (const w of writes) {
    // A merged-away id answers as its survivor: fall back to the single unmatched result.
    const record = byId.get(w.externalId!) ?? (writes.length === 1 ? answer.value.results[0] : undefined);
    if (!record)
      return err({ code: 'Transient', message: `HubSpot update answered without ${w.externalId}` });
    receipts.push(receiptOf(spec, w, record as HubspotRecord));
  }
  return ok(receipts);
}

/** The object types HubSpot merges (and the entity types they hold: the connector's `merges`). */
export const MERGEABLE_OBJECTS: ReadonlySet<HubspotObjectType> = new Set(['contacts', 'companies', 'deals']);

/** The SDK's merge of a mergeable type (`crm.objects` has none in this SDK version). */
function mergeApi(client: Client, objectType: HubspotObjectType) {
  if (objectType === 'contacts') return client.crm.contacts.basicApi;
  if (objectType === 'companies') return client.crm.companies.basicApi;
  return client.crm.deals.basicApi;
}

/**
 * HubSpot's own merge, `POST /crm/v3/objects/{type}/merge { primaryObjectId, objectIdToMerge }`:
 * `externalId` survives with its own values and takes the ones it lacked from
 * `mergedExternalId`, whose id answers as the survivor from then on. The receipt is the
 * survivor's (its version after the merge: the next write's expectedVersion).
 *
 * Idempotent: sent again after it landed (a retry whose first answer was lost), HubSpot refuses
 * it, since the merged id now is the survivor. A refusal (4xx) is therefore checked by reading
 * the merged id: answered as the survivor, the merge is done and its receipt is that record;
 * otherwise the refusal stands, mapped like any error.
 */
async function merge(
  session: HubspotSession,
  spec: ObjectSpec,
  write: PushWrite,
): Promise<ConnectorResult<WriteReceipt>> {
  const primaryObjectId = write.externalId;
  const objectIdToMerge = write.mergedExternalId;
  if (!primaryObjectId || !objectIdToMerge || primaryObjectId === objectIdToMerge)
    return err({ code: 'Validation', message: 'a HubSpot merge needs two distinct record ids' });
  if (!MERGEABLE_OBJECTS.has(spec.objectType))
    return err({ code: 'Validation', message: `HubSpot cannot merge ${spec.objectType}` });
  const answer = await session.call('default', (c) =>
    mergeApi(c, spec.objectType).merge({ primaryObjectId, objectIdToMerge }),
  );
  if (answer.ok) return ok(receiptOf(spec, write, answer.value as HubspotRecord));
  if (answer.error.code !== 'Validation' && answer.error.code !== 'NotFound') return answer;
  const merged = await session.call('default', (c) =>
    c.crm.objects.basicApi.getById(spec.objectType, objectIdToMerge, requestedProperties(spec)),
  );
  if (merged.ok && merged.value.id === primaryObjectId)
    return ok(receiptOf(spec, write, merged.value as HubspotRecord));
  return answer;
}

/**
 * Before a contact is made again after HubSpot merged its old record away: the merge left the
 * old address on the surviving contact as a secondary one, which still finds that contact and,
 * unique like a primary address, would refuse the new contact (409). It is taken off there with
 * HubSpot's only API for secondary addresses (contacts v1), through the SDK's raw request. A
 * contact holding the address as its primary one is left alone: our own earlier create (a
 * retry; the upsert on our id finds it again) or someone's, whose refusal then stands.
 */
async function freeSecondaryEmail(session: HubspotSession, write: PushWrite): Promise<ConnectorResult<void>> {
  const email = emailOf(write);
  if (!email) return ok(undefined);
  const holder = await session.call('default', (c) =>
    c.crm.contacts.basicApi.getById(
      email,
      ['email', 'hs_additional_emails'],
      undefined,
      undefined,
      false,
      'email',
    ),
  );
  if (!holder.ok) return holder.error.code === 'NotFound' ? ok(undefined) : holder;
  if ((holder.value.properties.email ?? '').toLowerCase() === email) return ok(undefined);
  const path = `/contacts/v1/secondary-email/${encodeURIComponent(holder.value.id)}/email/${encodeURIComponent(email)}`;
  const removed = await session.call('default', async (c) => {
    const response = await c.apiRequest({ method: 'DELETE', path });
    if (response.ok || response.status === 404) return response.status;
    // As the SDK's own calls throw: `code` and a parsed body, mapped by the session.
    const headers = Object.fromEntries(response.headers.entries());
    throw { code: response.status, body: await response.json().catch(() => ({})), headers };
  });
  return removed.ok ? ok(undefined) : removed;
}

async function archive(
  session: HubspotSession,
  spec: ObjectSpec,
  writes: PushWrite[],
): Promise<ConnectorResult<WriteReceipt[]>> {
  const inputs = writes.map((w) => ({ id: w.externalId! }));
  const answer = await session.call('default', (c) =>
    c.crm.objects.batchApi.archive(spec.objectType, { inputs }),
  );
  if (!answer.ok) return answer;
  return ok(
    writes.map((w) => ({
      idempotencyKey: w.idempotencyKey,
      externalId: w.externalId!,
      contentHash: contentHash({}),
    })),
  );
}

/**
 * Associations through the v4 batch endpoints, one call per pair of object types, op and 100
 * writes: `POST /crm/v4/associations/{from}/{to}/batch/associate/default` (HubSpot's unlabelled
 * default type, e.g. contact→company 279) and `.../batch/archive` (every type between the pair).
 * Both are idempotent, so a retry of a batch that partly went through is harmless.
 */
export async function pushAssociations(
  ctx: ConnectionContext,
  writes: readonly AssociationWrite[],
): Promise<ConnectorResult<void>> {
  const session = new HubspotSession(ctx);
  const specs = specsFor(ctx.fieldMappings);
  const groups = new Map<
    string,
    { op: AssociationWrite['op']; from: string; to: string; writes: AssociationWrite[] }
  >();
  for (const w of writes) {
    const from = specOfEntity(w.fromType, specs)?.objectType;
    const to = specOfEntity(w.toType, specs)?.objectType;
    if (!from || !to)
      return err({
        code: 'Validation',
        message: `HubSpot does not associate ${w.fromType} with ${w.toType}`,
      });
    const key = `${w.op}|${from}|${to}`;
    const group = groups.get(key) ?? { op: w.op, from, to, writes: [] };
    group.writes.push(w);
    groups.set(key, group);
  }
  for (const { op, from, to, writes: list } of groups.values()) {
    for (let i = 0; i < list.length; i += BATCH) {
      const chunk = list.slice(i, i + BATCH);
      if (op === 'associate') {
        const answer = await session.call('default', (c) =>
          c.crm.associations.v4.batchApi
            .createDefault(from, to, {
              inputs: chunk.map((w) => ({ _from: { id: w.fromId }, to: { id: w.toId } })),
            })
            // The spec answers a partial failure in a 200 body; a 207 (which the SDK throws, its
            // body read as an error) says the same: the inputs it names were not associated.
            .catch((thrown: { code?: unknown; body?: { errors?: unknown[]; message?: string } }) => {
              if (thrown?.code !== 207) throw thrown;
              return { results: [], errors: thrown.body?.errors ?? [{ message: thrown.body?.message }] };
            }),
        );
        if (!answer.ok) return answer;
        const failed = batchError(answer.value);
        // A record gone or refused: not worth retrying as it is (the push isolates and dead-letters it).
        if (failed) return err(failed.code === 'Transient' ? { ...failed, code: 'Validation' } : failed);
      } else {
        // One input per from record, with every record to remove from it.
        const byFrom = new Map<string, string[]>();
        for (const w of chunk) byFrom.set(w.fromId, [...(byFrom.get(w.fromId) ?? []), w.toId]);
        const answer = await session.call('default', (c) =>
          c.crm.associations.v4.batchApi.archive(from, to, {
            inputs: [...byFrom].map(([id, toIds]) => ({ _from: { id }, to: toIds.map((t) => ({ id: t })) })),
          }),
        );
        if (!answer.ok) return answer;
      }
    }
  }
  return ok(undefined);
}

interface BatchFailure {
  category?: string;
  message?: string;
  status?: string;
  context?: Record<string, unknown>;
}

/** A 207's first error as HubSpot sent it. */
const firstBatchError = (answer: object): BatchFailure | undefined =>
  (answer as { errors?: BatchFailure[] }).errors?.[0];

/** A 207's first error, mapped (the rest of the batch was applied; a retry is idempotent). */
export function batchError(answer: object): ConnectorError | undefined {
  const first = firstBatchError(answer);
  if (!first) return undefined;
  const message = `HubSpot batch: ${first.message ?? first.category ?? 'error'}`;
  switch (first.category) {
    case 'OBJECT_NOT_FOUND':
      return { code: 'NotFound', message, status: 207 };
    case 'CONFLICT':
      return { code: 'Conflict', message, status: 207 };
    case 'VALIDATION_ERROR':
    case 'INVALID_EMAIL':
      return { code: 'Validation', message, status: 207 };
    default:
      return { code: 'Transient', message, status: 207 };
  }
}
