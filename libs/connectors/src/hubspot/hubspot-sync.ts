import { ASSOCIATIONS_FIELD, err, ok, type RecordAssociations, type SourceChangeInput } from '@syncline/core';
import type { ConnectionContext, ConnectorResult, Cursor, PullPage } from '../contract/connector';
import {
  associationsOfRecord,
  associationTypesOf,
  type HubspotRecord,
  OBJECT_SPECS,
  type ObjectSpec,
  requestedProperties,
  sortIds,
  specsFor,
  toMillis,
  toUnified,
  versionOf,
} from './hubspot.mapper';
import { HubspotSession } from './hubspot-session';

const CURSOR_VERSION = 1;
const LIST_PAGE = 100;
const SEARCH_PAGE = 200;
/** HubSpot refuses search offsets at 10,000: narrow the window before reaching it. */
const SEARCH_CAP = 10_000;
/** Search results lag writes a little; every incremental window reaches back this far. */
export const OVERLAP_MS = 5 * 60_000;

/**
 * The cursor, flat as the contract wants it. `phase` backfill: listing `stream` from the
 * list endpoint's `after`. `phase` pull: per stream a search over modified ≥ since − overlap
 * (offset `after` within the window starting at `windowFrom`), then the archived list for
 * tombstones. `since.<type>` is the highest modified time seen, in HubSpot's clock.
 */
interface SyncCursor {
  v: number;
  phase: 'backfill' | 'pull';
  stream: number;
  step: 'search' | 'archived';
  after: string | null;
  windowFrom: number | null;
  windowMax: number | null;
  startedAt: number;
  archivedSince: number;
  seen: number;
  total: number | null;
  /** Backfill: 0 while the current stream (longer than a page) is not yet counted. */
  counted: number;
  since: Record<string, number>;
}

function encode(c: SyncCursor): Cursor {
  const flat: Record<string, string | number | null> = {
    v: c.v,
    phase: c.phase,
    stream: c.stream,
    step: c.step,
    after: c.after,
    windowFrom: c.windowFrom,
    windowMax: c.windowMax,
    startedAt: c.startedAt,
    archivedSince: c.archivedSince,
    seen: c.seen,
    total: c.total,
    counted: c.counted,
  };
  for (const [t, ms] of Object.entries(c.since)) flat[`since.${t}`] = ms;
  return flat;
}

function decode(cursor: Cursor): SyncCursor | undefined {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const numOrNull = (v: unknown) => (v === null || v === undefined ? null : (num(v) ?? Number.NaN));
  if (cursor.v !== CURSOR_VERSION) return undefined;
  const phase = cursor.phase;
  const step = cursor.step;
  const stream = num(cursor.stream);
  const startedAt = num(cursor.startedAt);
  const archivedSince = num(cursor.archivedSince);
  if ((phase !== 'backfill' && phase !== 'pull') || (step !== 'search' && step !== 'archived'))
    return undefined;
  if (stream === undefined || stream < 0 || stream >= OBJECT_SPECS.length) return undefined;
  if (startedAt === undefined || archivedSince === undefined) return undefined;
  const after = cursor.after;
  if (after !== null && typeof after !== 'string') return undefined;
  const since: Record<string, number> = {};
  for (const spec of OBJECT_SPECS) {
    const ms = num(cursor[`since.${spec.objectType}`]);
    if (ms === undefined) return undefined;
    since[spec.objectType] = ms;
  }
  const windowFrom = numOrNull(cursor.windowFrom);
  const windowMax = numOrNull(cursor.windowMax);
  const total = numOrNull(cursor.total);
  if ([windowFrom, windowMax, total].some((v) => Number.isNaN(v))) return undefined;
  return {
    v: CURSOR_VERSION,
    phase,
    stream,
    step,
    after,
    windowFrom,
    windowMax,
    startedAt,
    archivedSince,
    seen: num(cursor.seen) ?? 0,
    total,
    counted: cursor.counted === 0 ? 0 : 1,
    since,
  };
}

const invalid = (cursor: Cursor) =>
  err({
    code: 'CursorInvalid' as const,
    message: `unreadable HubSpot cursor ${JSON.stringify(cursor).slice(0, 200)}`,
  });

/**
 * A record version as a change. `associations` (read with it) go on the change's fields under
 * ASSOCIATIONS_FIELD; a change without them says nothing about the record's associations.
 * An association change moves the record's modified date (HubSpot recalculates its association
 * properties), so a version's key still names one state of its associations.
 */
export function recordChange(
  ctx: ConnectionContext,
  spec: ObjectSpec,
  raw: HubspotRecord,
  associations?: RecordAssociations,
): SourceChangeInput {
  const view = toUnified(spec, raw);
  const updatedMs = toMillis(raw.updatedAt);
  const origin = { ...(view.origin ?? {}), ...(view.synclineId ? { synclineId: view.synclineId } : {}) };
  return {
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
    entityType: spec.entityType,
    externalId: raw.id,
    op: 'upsert',
    // The same record version always gives the same key, however often it is read.
    eventKey: `${spec.objectType}:${raw.id}:${updatedMs}`,
    eventTime: new Date(updatedMs),
    fields: associations ? { ...view.fields, [ASSOCIATIONS_FIELD]: associations } : view.fields,
    fieldTimes: view.fieldTimes,
    providerVersion: versionOf(raw),
    ...(Object.keys(origin).length > 0 ? { origin } : {}),
  };
}

export function tombstone(
  ctx: { workspaceId: string; connectionId: string },
  spec: ObjectSpec,
  id: string,
  at: number,
  origin?: Record<string, unknown>,
): SourceChangeInput {
  return {
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
    entityType: spec.entityType,
    externalId: id,
    op: 'delete',
    // Pull (archivedAt) and webhook (occurredAt) of the same delete carry the same time.
    eventKey: `${spec.objectType}:${id}:deleted:${at}`,
    eventTime: new Date(at),
    fields: {},
    ...(origin ? { origin } : {}),
  };
}

/** One page of the full scan: the list endpoint, stream by stream. */
export async function backfillPage(ctx: ConnectionContext, raw: Cursor): Promise<ConnectorResult<PullPage>> {
  const session = new HubspotSession(ctx);
  let cursor: SyncCursor;
  if (Object.keys(raw).length === 0) {
    const startedAt = Date.now();
    cursor = {
      v: CURSOR_VERSION,
      phase: 'backfill',
      stream: 0,
      step: 'search',
      after: null,
      windowFrom: null,
      windowMax: null,
      startedAt,
      archivedSince: startedAt,
      seen: 0,
      total: 0,
      counted: 1,
      since: Object.fromEntries(OBJECT_SPECS.map((s) => [s.objectType, startedAt])),
    };
  } else {
    const decoded = decode(raw);
    if (decoded?.phase !== 'backfill') return invalid(raw);
    cursor = decoded;
  }
  const spec = specsFor(ctx.fieldMappings)[cursor.stream]!;
  // Progress: a stream of one page counts itself; a longer one is counted by a search
  // (its own allowance) in parallel with its second page, so the count costs no wait.
  const countNow = cursor.after !== null && cursor.counted === 0;
  const [page, counted] = await Promise.all([
    session.call('default', (c) =>
      c.crm.objects.basicApi.getPage(
        spec.objectType,
        LIST_PAGE,
        cursor.after ?? undefined,
        requestedProperties(spec),
        undefined,
        // The list carries associations itself: the backfill reads them at no extra request.
        associationTypesOf(spec),
        false,
      ),
    ),
    countNow ? countStream(session, spec) : Promise.resolve(ok(0)),
  ]);
  if (!page.ok) return page;
  const firstPageHasMore = cursor.after === null && !!page.value.paging?.next?.after;
  if (cursor.after === null)
    cursor = firstPageHasMore
      ? { ...cursor, counted: 0 }
      : { ...cursor, total: (cursor.total ?? 0) + page.value.results.length };
  // A failed count only loses the estimate.
  if (countNow)
    cursor = { ...cursor, counted: 1, total: (cursor.total ?? 0) + (counted.ok ? counted.value : 0) };
  const changes = page.value.results.map((r) =>
    recordChange(ctx, spec, r as HubspotRecord, associationsOfRecord(spec, r as HubspotRecord)),
  );
  const seen = cursor.seen + changes.length;
  const progress = { seen, estimatedTotal: Math.max(cursor.total ?? 0, seen) };
  const nextAfter = page.value.paging?.next?.after;
  if (nextAfter)
    return ok({ changes, cursor: encode({ ...cursor, after: nextAfter, seen }), done: false, progress });
  if (cursor.stream + 1 < OBJECT_SPECS.length)
    return ok({
      changes,
      cursor: encode({ ...cursor, stream: cursor.stream + 1, after: null, seen }),
      done: false,
      progress,
    });
  // Done: incremental pulls start from when the backfill began (minus the overlap).
  const pull: SyncCursor = {
    ...cursor,
    phase: 'pull',
    stream: 0,
    step: 'search',
    after: null,
    seen: 0,
    total: null,
  };
  return ok({
    changes,
    cursor: encode(pull),
    done: true,
    progress,
    watermark: new Date(cursor.startedAt - OVERLAP_MS),
  });
}

/** HubSpot's v4 batch read takes up to 1,000 ids. */
const ASSOCIATION_BATCH = 1_000;

/**
 * The associations of records of one object type (the types its spec carries), through the v4
 * batch read: one request per associated type and 1,000 records, never one per record. A record
 * with none of a type gets an empty list (HubSpot answers it as an error of the 207).
 */
export async function readAssociations(
  session: HubspotSession,
  spec: ObjectSpec,
  ids: readonly string[],
): Promise<ConnectorResult<Map<string, RecordAssociations>>> {
  const out = new Map<string, RecordAssociations>();
  if (!spec.associations || spec.associations.length === 0 || ids.length === 0) return ok(out);
  for (const id of ids) out.set(id, {});
  for (const { objectType, entityType } of spec.associations) {
    for (const id of ids) out.get(id)![entityType] = [];
    for (let i = 0; i < ids.length; i += ASSOCIATION_BATCH) {
      const chunk = ids.slice(i, i + ASSOCIATION_BATCH);
      const read = await session.call('default', (c) =>
        c.crm.associations.v4.batchApi.getPage(spec.objectType, objectType, {
          inputs: chunk.map((id) => ({ id })),
        }),
      );
      if (!read.ok) return read;
      for (const result of read.value.results) {
        const of = out.get(String(result._from.id));
        if (of) of[entityType] = sortIds(result.to.map((t) => String(t.toObjectId)));
      }
    }
  }
  return ok(out);
}

async function countStream(session: HubspotSession, spec: ObjectSpec): Promise<ConnectorResult<number>> {
  const counted = await session.call('search', (c) =>
    c.crm.objects.searchApi.doSearch(spec.objectType, { limit: 1, properties: ['hs_object_id'] }),
  );
  return counted.ok ? ok(counted.value.total) : counted;
}

/** One page of changes since the cursor: search by modified time, then the archived list. */
export async function pullPage(ctx: ConnectionContext, raw: Cursor): Promise<ConnectorResult<PullPage>> {
  const decoded = decode(raw);
  if (!decoded) return invalid(raw);
  if (decoded.phase === 'backfill') return backfillPage(ctx, raw);
  const session = new HubspotSession(ctx);
  let cursor = decoded;
  if (cursor.stream === 0 && cursor.step === 'search' && cursor.after === null && cursor.windowFrom === null)
    cursor = { ...cursor, startedAt: Date.now(), seen: 0 };
  const spec = specsFor(ctx.fieldMappings)[cursor.stream]!;
  const changes: SourceChangeInput[] = [];

  if (cursor.step === 'search') {
    const windowFrom = cursor.windowFrom ?? cursor.since[spec.objectType]! - OVERLAP_MS;
    const offset = Number(cursor.after ?? '0');
    const found = await session.call('search', (c) =>
      c.crm.objects.searchApi.doSearch(spec.objectType, {
        filterGroups: [
          { filters: [{ propertyName: spec.modifiedProperty, operator: 'GTE', value: String(windowFrom) }] },
        ],
        sorts: [spec.modifiedProperty],
        properties: requestedProperties(spec),
        limit: SEARCH_PAGE,
        after: String(offset),
      } as Parameters<typeof c.crm.objects.searchApi.doSearch>[1]),
    );
    if (!found.ok) return found;
    // Search results carry no associations: one batch read per associated type and page.
    const associated = await readAssociations(
      session,
      spec,
      found.value.results.map((r) => r.id),
    );
    if (!associated.ok) return associated;
    let windowMax = cursor.windowMax ?? windowFrom;
    for (const r of found.value.results) {
      const change = recordChange(ctx, spec, r as HubspotRecord, associated.value.get(r.id));
      changes.push(change);
      windowMax = Math.max(windowMax, toMillis(r.updatedAt));
    }
    const since = { ...cursor.since, [spec.objectType]: Math.max(cursor.since[spec.objectType]!, windowMax) };
    const next = found.value.paging?.next?.after;
    let nextCursor: SyncCursor;
    if (next && Number(next) + SEARCH_PAGE <= SEARCH_CAP) {
      nextCursor = { ...cursor, after: next, windowFrom, windowMax, since };
    } else if (next) {
      // 10,000 cap ahead: start a new window at the newest modified time read so far.
      // (Records sharing that millisecond are read again; their keys repeat and the log drops them.)
      const from = windowMax > windowFrom ? windowMax : windowFrom + 1;
      nextCursor = { ...cursor, after: null, windowFrom: from, windowMax, since };
    } else {
      nextCursor = { ...cursor, step: 'archived', after: null, windowFrom: null, windowMax: null, since };
    }
    return ok(pageOf(changes, nextCursor, false));
  }

  // Archived records have no searchable time: list them and keep the recent ones.
  const page = await session.call('default', (c) =>
    c.crm.objects.basicApi.getPage(
      spec.objectType,
      LIST_PAGE,
      cursor.after ?? undefined,
      ['hs_object_id'],
      undefined,
      undefined,
      true,
    ),
  );
  if (!page.ok) return page;
  const threshold = cursor.archivedSince - OVERLAP_MS;
  for (const r of page.value.results) {
    const at = r.archivedAt ? toMillis(r.archivedAt) : toMillis(r.updatedAt);
    if (at >= threshold) changes.push(tombstone(ctx, spec, r.id, at));
  }
  const nextAfter = page.value.paging?.next?.after;
  if (nextAfter) return ok(pageOf(changes, { ...cursor, after: nextAfter }, false));
  if (cursor.stream + 1 < OBJECT_SPECS.length)
    return ok(pageOf(changes, { ...cursor, stream: cursor.stream + 1, step: 'search', after: null }, false));
  const roundDone: SyncCursor = {
    ...cursor,
    stream: 0,
    step: 'search',
    after: null,
    archivedSince: cursor.startedAt,
  };
  return ok({ ...pageOf(changes, roundDone, true), watermark: new Date(cursor.startedAt - OVERLAP_MS) });
}

function pageOf(changes: SourceChangeInput[], cursor: SyncCursor, done: boolean): PullPage {
  const seen = cursor.seen + changes.length;
  return { changes, cursor: encode({ ...cursor, seen }), done, progress: { seen } };
}
