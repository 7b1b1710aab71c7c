import type { Client } from '@hubspot/api-client';
import type { PropertyCreate } from '@hubspot/api-client/lib/codegen/crm/properties';
import { err, ok } from '@syncline/core';
import type {
  ConnectionContext,
  ConnectorError,
  ConnectorResult,
  InsightWrite,
  InsightWriteResult,
} from '../contract/connector';
import { type HubspotObjectType, type HubspotRecord, versionOf } from './hubspot.mapper';
import {
  INSIGHT_OBJECT_TYPES,
  INSIGHT_PROPERTIES,
  INSIGHT_PROPERTY_GROUP,
  insightValuesProblem,
  toHubspotInsightProperties,
} from './hubspot-insight-properties';
import { batchError } from './hubspot-push';
import { HubspotSession } from './hubspot-session';

const BATCH = 100;

const INSIGHT_TYPES = [...new Set(Object.values(INSIGHT_OBJECT_TYPES))] as HubspotObjectType[];

/**
 * Makes the insight properties where the portal lacks them, per object type: the `syncline`
 * group first (a property must name a group the portal has), then each missing property.
 * A 409 on either is a concurrent call that made it first: done all the same. A property of
 * ours that exists with another data type (made by hand) is refused as `Validation`: HubSpot
 * would refuse every value written to it. Returns `<objectType>.<property>` for each it made.
 */
export async function ensureInsightProperties(
  ctx: ConnectionContext,
): Promise<ConnectorResult<{ created: string[] }>> {
  const session = new HubspotSession(ctx);
  const created: string[] = [];
  for (const objectType of INSIGHT_TYPES) {
    const groups = await session.call('default', (c) => c.crm.properties.groupsApi.getAll(objectType));
    if (!groups.ok) return groups;
    if (!groups.value.results.some((g) => g.name === INSIGHT_PROPERTY_GROUP.name)) {
      const made = await session.call('default', (c) =>
        c.crm.properties.groupsApi.create(objectType, { ...INSIGHT_PROPERTY_GROUP }),
      );
      if (!made.ok && made.error.code !== 'Conflict') return made;
    }
    const listed = await session.call('default', (c) => c.crm.properties.coreApi.getAll(objectType));
    if (!listed.ok) return listed;
    const existing = new Map(listed.value.results.map((p) => [p.name, p]));
    for (const [displayOrder, p] of INSIGHT_PROPERTIES.entries()) {
      const found = existing.get(p.name);
      if (found) {
        if (found.type !== p.type)
          return err({
            code: 'Validation',
            message: `HubSpot ${objectType} property ${p.name} is of type ${found.type}; Syncline writes it as ${p.type}: delete it in HubSpot so Syncline can make it again`,
          });
        continue;
      }
      const definition: PropertyCreate = {
        name: p.name,
        label: p.label,
        description: p.description,
        groupName: INSIGHT_PROPERTY_GROUP.name,
        type: p.type as PropertyCreate['type'],
        fieldType: p.fieldType as PropertyCreate['fieldType'],
        displayOrder,
        // Not offered on forms: nobody is meant to fill it in.
        formField: false,
        ...(p.options
          ? { options: p.options.map((o, i) => ({ ...o, displayOrder: i, hidden: false })) }
          : {}),
      };
      const made = await session.call('default', (c) =>
        c.crm.properties.coreApi.create(objectType, definition),
      );
      if (made.ok) created.push(`${objectType}.${p.name}`);
      else if (made.error.code !== 'Conflict') return made;
    }
  }
  return ok({ created });
}

/**
 * Writes insight values with the batch update of each object type (≤100 records per call).
 * Idempotent: a write sets every insight property, so sending it again changes nothing.
 * A record that no longer exists comes back `gone`, the others of its batch written:
 * - HubSpot answers 207 naming the ids it could not find (OBJECT_NOT_FOUND) and applies the
 *   rest, so every write whose record is not among the results is `gone`; a merged-away id
 *   answers as the record it went into (its values landed there, until that record's own
 *   next write), which is not the record the write named: `gone` too;
 * - a batch refused whole for a missing record is read back to find which are missing, and
 *   sent again without them (once).
 * Any other refusal fails the push (the caller retries it whole: harmless, as above).
 */
export async function pushInsights(
  ctx: ConnectionContext,
  writes: readonly InsightWrite[],
): Promise<ConnectorResult<InsightWriteResult[]>> {
  const byType = new Map<HubspotObjectType, InsightWrite[]>();
  for (const w of writes) {
    const objectType = INSIGHT_OBJECT_TYPES[w.entityType];
    if (!objectType)
      return err({ code: 'Validation', message: `HubSpot holds no insight properties on ${w.entityType}` });
    if (!w.externalId)
      return err({ code: 'Validation', message: `insight write ${w.idempotencyKey} names no record` });
    const problem = insightValuesProblem(w.values);
    if (problem) return err({ code: 'Validation', message: `insight write ${w.idempotencyKey}: ${problem}` });
    byType.set(objectType, [...(byType.get(objectType) ?? []), w]);
  }
  const session = new HubspotSession(ctx);
  const outcomes = new Map<InsightWrite, Outcome>();
  for (const [objectType, list] of byType) {
    for (const batch of batchesOf(list)) {
      const done = await updateBatch(session, objectType, batch);
      if (!done.ok) return done;
      for (const [write, outcome] of done.value) outcomes.set(write, outcome);
    }
  }
  return ok(writes.map((w) => ({ idempotencyKey: w.idempotencyKey, ...outcomes.get(w)! })));
}

type Outcome = Omit<InsightWriteResult, 'idempotencyKey'>;

/** Batches of ≤100; a repeated record starts a new batch (HubSpot refuses repeated ids in one). */
function batchesOf(writes: readonly InsightWrite[]): InsightWrite[][] {
  const batches: { writes: InsightWrite[]; ids: Set<string> }[] = [];
  for (const w of writes) {
    let batch = batches.at(-1);
    if (!batch || batch.writes.length >= BATCH || batch.ids.has(w.externalId)) {
      batch = { writes: [], ids: new Set() };
      batches.push(batch);
    }
    batch.writes.push(w);
    batch.ids.add(w.externalId);
  }
  return batches.map((b) => b.writes);
}

/** The SDK's batch API of an object type that carries insights. */
function batchApiOf(client: Client, objectType: HubspotObjectType) {
  if (objectType === 'contacts') return client.crm.contacts.batchApi;
  if (objectType === 'companies') return client.crm.companies.batchApi;
  return client.crm.deals.batchApi;
}

/** A refusal of a whole batch that says a record of it was not found. */
const refusedForMissing = (error: ConnectorError): boolean =>
  error.code === 'NotFound' ||
  (error.code === 'Validation' && /not (be )?found|not exist|may be deleted/i.test(error.message));

async function updateBatch(
  session: HubspotSession,
  objectType: HubspotObjectType,
  batch: readonly InsightWrite[],
): Promise<ConnectorResult<Map<InsightWrite, Outcome>>> {
  const outcomes = new Map<InsightWrite, Outcome>();
  let pending = batch;
  for (let round = 0; pending.length > 0; round++) {
    const inputs = pending.map((w) => ({
      id: w.externalId,
      properties: toHubspotInsightProperties(w.values),
    }));
    const answer = await session.call('default', (c) => batchApiOf(c, objectType).update({ inputs }));
    if (!answer.ok) {
      if (round > 0 || !refusedForMissing(answer.error)) return answer;
      const missing = await missingIds(
        session,
        objectType,
        pending.map((w) => w.externalId),
      );
      if (!missing.ok) return missing;
      if (missing.value.size === 0) return answer;
      for (const w of pending) if (missing.value.has(w.externalId)) outcomes.set(w, { outcome: 'gone' });
      pending = pending.filter((w) => !missing.value.has(w.externalId));
      continue;
    }
    const errors = (answer.value as { errors?: { category?: string }[] }).errors ?? [];
    const failed = batchError({ errors: errors.filter((e) => e.category !== 'OBJECT_NOT_FOUND') });
    if (failed) return err(failed);
    const written = new Map(answer.value.results.map((r) => [r.id, r as HubspotRecord]));
    for (const w of pending) {
      const record = written.get(w.externalId);
      outcomes.set(
        w,
        record ? { outcome: 'written', providerVersion: versionOf(record) } : { outcome: 'gone' },
      );
    }
    break;
  }
  return ok(outcomes);
}

/** The ids HubSpot no longer holds as records of their own (deleted, or merged into another). */
async function missingIds(
  session: HubspotSession,
  objectType: HubspotObjectType,
  ids: readonly string[],
): Promise<ConnectorResult<Set<string>>> {
  const read = await session.call('default', (c) =>
    c.crm.objects.batchApi.read(
      objectType,
      { inputs: ids.map((id) => ({ id })), properties: ['hs_object_id'], propertiesWithHistory: [] },
      false,
    ),
  );
  // Asked only of ids it does not hold, HubSpot may refuse the read whole.
  if (!read.ok) return read.error.code === 'NotFound' ? ok(new Set(ids)) : read;
  const held = new Set(read.value.results.map((r) => r.id));
  return ok(new Set(ids.filter((id) => !held.has(id))));
}
