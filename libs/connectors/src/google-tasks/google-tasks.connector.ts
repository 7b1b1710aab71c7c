import { err, ok, type SourceChangeInput } from '@syncline/core';
import { tasks, type tasks_v1 } from 'googleapis/build/src/apis/tasks';
import type {
  ConnectionContext,
  Connector,
  ConnectorResult,
  Cursor,
  PullPage,
  PushWrite,
  WriteReceipt,
} from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import { googleCall, googleRootUrl, identifyGoogleAccount, type RetryPolicy } from '../google-common';
import { checkVersions, type VersionCheck } from '../shared/check-versions';
import {
  listIdFromSelfLink,
  markerFor,
  markerOf,
  splitExternalId,
  taskExternalId,
  toGoogleTask,
  toTaskChange,
  toTaskFields,
  withMarker,
} from './google-task.mapper';

export interface GoogleTasksOptions {
  /** Changes gathered per backfill/pull call before returning a page. */
  pageSize?: number;
  /** Re-read this much before the cursor: covers clock skew and writes landing late. */
  overlapMs?: number;
  /** tasks.list calls per backfill/pull call at most (lists with nothing in them cost one each). */
  maxRequestsPerPage?: number;
  retry?: Partial<RetryPolicy>;
  now?: () => number;
}

const CURSOR_VERSION = 1;
const DEFAULT_LIST = '@default';

/** Where a scan over all lists stands: the list (by id, lists sorted) and its page token. */
interface ScanPosition {
  list: string | null;
  pageToken: string | null;
}

interface TasksCursor extends ScanPosition {
  /** Backfill: when it started; pull: the time changes are complete up to. */
  since: string;
  /** Pull in progress: when it started (the next `since`). */
  pullStartedAt: string | null;
  seen: number;
}

function readCursor(cursor: Cursor): TasksCursor | undefined {
  if (
    cursor.v !== CURSOR_VERSION ||
    typeof cursor.since !== 'string' ||
    Number.isNaN(Date.parse(cursor.since))
  )
    return undefined;
  const str = (k: string) =>
    typeof cursor[k] === 'string' && cursor[k] !== '' ? (cursor[k] as string) : null;
  return {
    since: cursor.since,
    list: str('list'),
    pageToken: str('pageToken'),
    pullStartedAt: str('pullStartedAt'),
    seen: typeof cursor.seen === 'number' ? cursor.seen : 0,
  };
}

const writeCursor = (c: TasksCursor): Cursor => ({ v: CURSOR_VERSION, ...c });

export function createGoogleTasksConnector(options: GoogleTasksOptions = {}): Connector {
  const pageSize = options.pageSize ?? 100;
  const overlapMs = options.overlapMs ?? 5 * 60_000;
  const maxRequests = options.maxRequestsPerPage ?? 20;
  const now = options.now ?? Date.now;
  const clients = new Map<string, tasks_v1.Tasks>();
  const api = (ctx: ConnectionContext) => {
    const rootUrl = googleRootUrl(ctx);
    let client = clients.get(rootUrl);
    if (!client) {
      client = tasks({ version: 'v1', rootUrl });
      clients.set(rootUrl, client);
    }
    return client;
  };
  const call = <T>(ctx: ConnectionContext, fn: Parameters<typeof googleCall<T>>[1], retries?: number) =>
    googleCall<T>(ctx, fn, {
      ...(options.retry || retries !== undefined
        ? { retry: { ...options.retry, ...(retries !== undefined ? { retries } : {}) } }
        : {}),
    });

  async function listIds(ctx: ConnectionContext): Promise<ConnectorResult<string[]>> {
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const res = await call<tasks_v1.Schema$TaskLists>(ctx, (o) =>
        api(ctx).tasklists.list({ maxResults: 100, ...(pageToken ? { pageToken } : {}) }, o),
      );
      if (!res.ok) return res;
      for (const l of res.value.items ?? []) if (l.id) ids.push(l.id);
      pageToken = res.value.nextPageToken ?? undefined;
    } while (pageToken);
    return ok(ids.sort());
  }

  /**
   * Walks every list from `from`, page by page, until a page's worth of changes or the
   * request cap; `next` is null once the last list is through.
   */
  async function scan(
    ctx: ConnectionContext,
    from: ScanPosition,
    query: { updatedMin?: string; showDeleted: boolean },
  ): Promise<ConnectorResult<{ changes: SourceChangeInput[]; next: ScanPosition | null }>> {
    const lists = await listIds(ctx);
    if (!lists.ok) return lists;
    let i = from.list === null ? 0 : lists.value.findIndex((id) => id >= from.list!);
    if (i === -1) return ok({ changes: [], next: null });
    let pageToken = lists.value[i] === from.list ? from.pageToken : null;
    const changes: SourceChangeInput[] = [];
    const receivedAt = new Date(now());
    const scope = { workspaceId: ctx.workspaceId, connectionId: ctx.connectionId };
    for (
      let requests = 0;
      i < lists.value.length && changes.length < pageSize && requests < maxRequests;
      requests++
    ) {
      const tasklist = lists.value[i]!;
      const res = await call<tasks_v1.Schema$Tasks>(ctx, (o) =>
        api(ctx).tasks.list(
          {
            tasklist,
            maxResults: Math.min(100, pageSize),
            showCompleted: true,
            showHidden: true, // tasks completed in Google's apps are hidden
            showDeleted: query.showDeleted,
            ...(query.updatedMin ? { updatedMin: query.updatedMin } : {}),
            ...(pageToken ? { pageToken } : {}),
          },
          o,
        ),
      );
      if (!res.ok) return res;
      for (const task of res.value.items ?? []) {
        if (task.id && (query.showDeleted || !task.deleted))
          changes.push(toTaskChange(task, tasklist, scope, receivedAt));
      }
      pageToken = res.value.nextPageToken ?? null;
      if (!pageToken) i++;
    }
    return ok({ changes, next: i < lists.value.length ? { list: lists.value[i]!, pageToken } : null });
  }

  async function pushOne(
    ctx: ConnectionContext,
    write: PushWrite,
    markers: Map<string, Map<string, tasks_v1.Schema$Task>>,
  ): Promise<ConnectorResult<WriteReceipt>> {
    const receipt = (task: tasks_v1.Schema$Task, listId: string): WriteReceipt => ({
      idempotencyKey: write.idempotencyKey,
      externalId: taskExternalId(listId, task.id ?? ''),
      ...(task.etag ? { providerVersion: task.etag } : {}),
      contentHash: contentHash(task.deleted ? {} : { ...toTaskFields(task, listId) }),
    });
    if (write.entityType !== 'task')
      return err({ code: 'Validation', message: `google-tasks cannot write ${write.entityType}` });
    if (write.op === 'merge') return err({ code: 'Validation', message: 'Google Tasks merges no tasks' });
    if (write.op === 'create') {
      const requested = await listFor(ctx, write.fields.listId);
      if (!requested.ok) return requested;
      return create(requested.value);
    }
    return change();

    async function create(requested: string): Promise<ConnectorResult<WriteReceipt>> {
      const marker = markerFor(write.idempotencyKey);
      const known = await markersIn(ctx, requested, markers);
      if (!known.ok) return known;
      const existing = known.value.get(marker);
      if (existing) return ok(receipt(existing, listIdFromSelfLink(existing.selfLink) ?? requested));
      const body = toGoogleTask(write.fields);
      const requestBody = { ...body, notes: withMarker(body.notes, marker) };
      // No retry inside: an insert that failed late may have landed; the next push finds its marker.
      const res = await call<tasks_v1.Schema$Task>(
        ctx,
        (o) => api(ctx).tasks.insert({ tasklist: requested, requestBody }, o),
        0,
      );
      if (!res.ok) {
        markers.delete(requested);
        return res;
      }
      known.value.set(marker, res.value);
      return ok(receipt(res.value, listIdFromSelfLink(res.value.selfLink) ?? requested));
    }

    async function change(): Promise<ConnectorResult<WriteReceipt>> {
      const target = write.externalId ? splitExternalId(write.externalId) : undefined;
      if (!target)
        return err({ code: 'Validation', message: `${write.op} needs an externalId <list>/<task>` });
      if (write.op === 'update') {
        const res = await call<tasks_v1.Schema$Task>(ctx, (o) =>
          api(ctx).tasks.patch(
            { tasklist: target.listId, task: target.taskId, requestBody: toGoogleTask(write.fields) },
            o,
          ),
        );
        return res.ok ? ok(receipt(res.value, target.listId)) : res;
      }
      const res = await call<void>(ctx, (o) =>
        api(ctx).tasks.delete({ tasklist: target.listId, task: target.taskId }, o),
      );
      if (res.ok || res.error.code === 'NotFound') {
        return ok({
          idempotencyKey: write.idempotencyKey,
          externalId: write.externalId!,
          contentHash: contentHash({}),
        });
      }
      return res;
    }
  }

  /**
   * The list a create goes to: the one the fields name when it is this account's, else the
   * default list. A task made elsewhere (Microsoft To Do) carries that provider's list id,
   * which names nothing here.
   */
  async function listFor(ctx: ConnectionContext, listId: unknown): Promise<ConnectorResult<string>> {
    if (typeof listId !== 'string' || listId === DEFAULT_LIST) return ok(DEFAULT_LIST);
    const lists = await listIds(ctx);
    if (!lists.ok) return lists;
    return ok(lists.value.includes(listId) ? listId : DEFAULT_LIST);
  }

  /**
   * The version check the Tasks API does not do for us: it documents no conditional requests
   * (If-Match is neither documented nor honoured by the emulator), so every update and delete
   * that carries `expectedVersion` reads its task first (tasks.get, budgeted like any call) and
   * compares the etag, the same string pulls report as `providerVersion` and receipts carry
   * (see `checkVersions`); a task flagged deleted counts as gone. Left open: the milliseconds
   * between read and write.
   */
  const versionCheck: VersionCheck<{ listId: string; taskId: string }, tasks_v1.Schema$Task> = {
    provider: 'google-tasks',
    noun: 'task',
    ifMatch: false,
    namesIds: true,
    // An id that does not split is refused as Validation by pushOne.
    target: splitExternalId,
    read: (ctx, { listId, taskId }) =>
      call<tasks_v1.Schema$Task>(ctx, (o) => api(ctx).tasks.get({ tasklist: listId, task: taskId }, o)),
    isGone: (task) => !!task.deleted,
    versionOf: (task) => task.etag,
    toChange: (ctx, task, { listId }) =>
      task.id
        ? toTaskChange(
            task,
            listId,
            { workspaceId: ctx.workspaceId, connectionId: ctx.connectionId },
            new Date(now()),
          )
        : undefined,
  };

  /** Our markers in one list (deleted and hidden tasks included), read once per push. */
  async function markersIn(
    ctx: ConnectionContext,
    tasklist: string,
    cache: Map<string, Map<string, tasks_v1.Schema$Task>>,
  ): Promise<ConnectorResult<Map<string, tasks_v1.Schema$Task>>> {
    const cached = cache.get(tasklist);
    if (cached) return ok(cached);
    const found = new Map<string, tasks_v1.Schema$Task>();
    let pageToken: string | undefined;
    do {
      const res = await call<tasks_v1.Schema$Tasks>(ctx, (o) =>
        api(ctx).tasks.list(
          {
            tasklist,
            maxResults: 100,
            showCompleted: true,
            showHidden: true,
            showDeleted: true,
            ...(pageToken ? { pageToken } : {}),
          },
          o,
        ),
      );
      if (!res.ok) return res;
      for (const task of res.value.items ?? []) {
        const marker = markerOf(task.notes);
        if (marker) found.set(marker, task);
      }
      pageToken = res.value.nextPageToken ?? undefined;
    } while (pageToken);
    cache.set(tasklist, found);
    return ok(found);
  }

  return {
    provider: 'google-tasks',
    entities: ['task'],
    writable: ['task'],
    identifyAccount: identifyGoogleAccount,

    async backfill(ctx, cursor): Promise<ConnectorResult<PullPage>> {
      const prior = readCursor(cursor);
      // Resume a backfill in progress; anything else starts one.
      const state: TasksCursor =
        prior && prior.pullStartedAt === null && prior.list !== null && cursor.phase === 'backfill'
          ? prior
          : {
              since: new Date(now()).toISOString(),
              list: null,
              pageToken: null,
              pullStartedAt: null,
              seen: 0,
            };
      const res = await scan(ctx, state, { showDeleted: false });
      if (!res.ok) return res;
      const seen = state.seen + res.value.changes.length;
      const next = res.value.next;
      return ok({
        changes: res.value.changes,
        // Done: pulls start from when the backfill started, so nothing edited meanwhile is missed.
        cursor: next
          ? { ...writeCursor({ ...state, ...next, seen }), phase: 'backfill' }
          : writeCursor({ since: state.since, list: null, pageToken: null, pullStartedAt: null, seen: 0 }),
        done: next === null,
        progress: { seen },
      });
    },

    async pull(ctx, cursor): Promise<ConnectorResult<PullPage>> {
      const state = readCursor(cursor);
      if (!state || cursor.phase === 'backfill')
        return err({ code: 'CursorInvalid', message: 'not a google-tasks pull cursor' });
      const startedAt = state.pullStartedAt ?? new Date(now()).toISOString();
      // A round begins at the first list. A cursor part-way through a round without its start
      // cannot say what the round guarantees: it finishes without a watermark.
      const startKnown = state.pullStartedAt !== null || state.list === null;
      const updatedMin = new Date(Date.parse(state.since) - overlapMs).toISOString();
      const res = await scan(ctx, state, { updatedMin, showDeleted: true });
      if (!res.ok) return res;
      // One entry per task version in this page (a task can move between pages while paging).
      const unique = [...new Map(res.value.changes.map((c) => [c.eventKey, c])).values()];
      const seen = state.seen + unique.length;
      const next = res.value.next;
      if (next)
        return ok({
          changes: unique,
          cursor: writeCursor({ ...state, ...next, pullStartedAt: startedAt, seen }),
          done: false,
          progress: { seen },
        });
      // Only the page that finishes the round guarantees what came before the round began.
      return ok({
        changes: unique,
        cursor: writeCursor({ since: startedAt, list: null, pageToken: null, pullStartedAt: null, seen: 0 }),
        done: true,
        progress: { seen },
        ...(startKnown ? { watermark: new Date(Date.parse(startedAt) - overlapMs) } : {}),
      });
    },

    verifyWebhook() {
      return err({ code: 'Validation', message: 'Google Tasks sends no notifications' });
    },

    parseWebhook() {
      return err({ code: 'Validation', message: 'Google Tasks sends no notifications' });
    },

    async push(ctx, writes) {
      const checked = await checkVersions(ctx, writes, versionCheck);
      if (!checked.ok) return checked;
      const markers = new Map<string, Map<string, tasks_v1.Schema$Task>>();
      const receipts: WriteReceipt[] = [];
      for (const write of writes) {
        const res = await pushOne(ctx, write, markers);
        if (!res.ok) return res;
        receipts.push(res.value);
      }
      return ok(receipts);
    },
  };
}

export const googleTasksConnector: Connector = createGoogleTasksConnector();
