import type { Client, GraphRequest } from '@microsoft/microsoft-graph-client';
import { err, ok, type SourceChangeInput } from '@syncline/core';
import type {
  ConnectionContext,
  Connector,
  ConnectorError,
  ConnectorResult,
  Cursor,
  PullPage,
  PushWrite,
  Subscription,
  WriteReceipt,
} from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import {
  graphCall,
  identifyMicrosoftAccount,
  parseGraphNotification,
  type RetryPolicy,
  verifyGraphNotification,
} from '../microsoft-common';
import { checkVersions, type VersionCheck } from '../shared/check-versions';
import {
  type GraphPage,
  originExtension,
  originOf,
  splitExternalId,
  type TodoTask,
  type TodoTaskList,
  type TodoTaskWrite,
  taskExternalId,
  toTaskChange,
  toTaskFields,
  toTodoTask,
} from './todo-task.mapper';

export interface MicrosoftTodoOptions {
  /** Tasks per delta page (`Prefer: odata.maxpagesize`), and changes gathered per backfill/pull call. */
  pageSize?: number;
  /** Delta requests per backfill/pull call at most (a list with nothing new costs one). */
  maxRequestsPerPage?: number;
  /** Tasks per request when a create looks for an earlier attempt of itself. */
  lookupPageSize?: number;
  /** How long a subscription lasts; Graph allows To Do tasks 4,230 minutes at most. */
  subscriptionTtlMs?: number;
  retry?: Partial<RetryPolicy>;
  now?: () => number;
}

const CURSOR_VERSION = 1;
/** Cursor keys of the per-list task chains: `list:<list id>` → its deltaLink (null: not read yet). */
const CHAIN = 'list:';
const LISTS_DELTA = '/me/todo/lists/delta';
/** A lists delta round longer than this is a provider fault, not a mailbox's lists. */
const MAX_LIST_PAGES = 100;
const MAX_CLIENT_STATE = 128;
const DEFAULT_SUBSCRIPTION_TTL_MS = 4_200 * 60_000;

/**
 * Where a scan stands. A backfill reads every list's first delta round, a pull every list's
 * next one (a pass); lists in id order, `at` the list being read and `next` the nextLink
 * within its round. Between passes only deltaLinks are kept: the lists' and one per list.
 */
interface TodoCursor {
  phase: 'backfill' | 'pull';
  /** The deltaLink of the task lists themselves. */
  lists: string;
  chains: Map<string, string | null>;
  at: string | null;
  next: string | null;
  seen: number;
}

function readCursor(cursor: Cursor): TodoCursor | undefined {
  const { v, phase, lists } = cursor;
  if (v !== CURSOR_VERSION || (phase !== 'backfill' && phase !== 'pull')) return undefined;
  if (typeof lists !== 'string' || lists === '') return undefined;
  const str = (k: string) =>
    typeof cursor[k] === 'string' && cursor[k] !== '' ? (cursor[k] as string) : null;
  const chains = new Map<string, string | null>();
  for (const [key, link] of Object.entries(cursor)) {
    if (!key.startsWith(CHAIN) || key.length === CHAIN.length) continue;
    if (link !== null && (typeof link !== 'string' || link === '')) return undefined;
    chains.set(key.slice(CHAIN.length), link);
  }
  return {
    phase,
    lists,
    chains,
    at: str('at'),
    next: str('next'),
    seen: typeof cursor.seen === 'number' ? cursor.seen : 0,
  };
}

function writeCursor(c: TodoCursor): Cursor {
  const out: Record<string, string | number | null> = {
    v: CURSOR_VERSION,
    phase: c.phase,
    lists: c.lists,
    at: c.at,
    next: c.next,
    seen: c.seen,
  };
  for (const id of [...c.chains.keys()].sort()) out[`${CHAIN}${id}`] = c.chains.get(id) ?? null;
  return out;
}

/** The list after `after` in id order (the first one without `after`), or null at the end. */
function listAfter(chains: ReadonlyMap<string, unknown>, after: string | null): string | null {
  return [...chains.keys()].sort().find((id) => after === null || id > after) ?? null;
}

const listPath = (listId: string) => `/me/todo/lists/${encodeURIComponent(listId)}`;
const taskPath = (listId: string, taskId: string) =>
  `${listPath(listId)}/tasks/${encodeURIComponent(taskId)}`;

interface GraphSubscription {
  id?: string;
  expirationDateTime?: string;
}

const _text = (v: unknown): string => (typeof v === 'string' ? v : '');

export function createMicrosoftTodoConnector(options: MicrosoftTodoOptions = {}): Connector {
  const pageSize = options.pageSize ?? 100;
  const maxRequests = options.maxRequestsPerPage ?? 20;
  const lookupPageSize = options.lookupPageSize ?? 100;
  const subscriptionTtlMs = options.subscriptionTtlMs ?? DEFAULT_SUBSCRIPTION_TTL_MS;
  const now = options.now ?? Date.now;
  const prefer = `odata.maxpagesize=${pageSize}`;

  const call = <T>(ctx: ConnectionContext, fn: (client: Client) => Promise<T>, retries?: number) =>
    graphCall<T>(
      ctx,
      fn,
      options.retry || retries !== undefined
        ? { retry: { ...options.retry, ...(retries !== undefined ? { retries } : {}) } }
        : {},
    );
  const scopeOf = (ctx: ConnectionContext) => ({
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
  });

  /** One whole lists delta round from `from` (the initial call without it): what is live, what went. */
  async function listRound(
    ctx: ConnectionContext,
    from: string | undefined,
  ): Promise<ConnectorResult<{ live: string[]; removed: string[]; deltaLink: string }>> {
    const live = new Set<string>();
    const removed = new Set<string>();
    let url = from ?? LISTS_DELTA;
    for (let pages = 0; pages < MAX_LIST_PAGES; pages++) {
      const res = await call<GraphPage<TodoTaskList>>(ctx, (c) => c.api(url).header('Prefer', prefer).get());
      if (!res.ok) return res;
      for (const list of res.value.value ?? []) {
        if (!list.id) continue;
        if (list['@removed']) {
          live.delete(list.id);
          removed.add(list.id);
        } else {
          removed.delete(list.id);
          live.add(list.id);
        }
      }
      const deltaLink = res.value['@odata.deltaLink'];
      if (deltaLink) return ok({ live: [...live], removed: [...removed], deltaLink });
      const nextLink = res.value['@odata.nextLink'];
      if (!nextLink)
        return err({ code: 'Transient', message: 'lists delta page without nextLink or deltaLink' });
      url = nextLink;
    }
    return err({ code: 'Transient', message: `lists delta did not end within ${MAX_LIST_PAGES} pages` });
  }

  /**
   * Reads task delta pages from where `state` stands, list after list, until a page's worth of
   * changes, the request cap, or the end of the pass (`at` null). A list gone since the pass
   * began answers 404: its chain ends there (the next lists round reports its removal).
   */
  async function readTasks(
    ctx: ConnectionContext,
    state: TodoCursor,
    incremental: boolean,
  ): Promise<ConnectorResult<{ changes: SourceChangeInput[]; state: TodoCursor }>> {
    const chains = new Map(state.chains);
    let { at, next } = state;
    const changes = new Map<string, SourceChangeInput>();
    const receivedAt = new Date(now());
    const scope = scopeOf(ctx);
    for (let requests = 0; at !== null && changes.size < pageSize && requests < maxRequests; requests++) {
      const listId: string = at;
      const url = next ?? chains.get(listId) ?? `${listPath(listId)}/tasks/delta`;
      const res = await call<GraphPage<TodoTask>>(ctx, (c) => c.api(url).header('Prefer', prefer).get());
      if (!res.ok) {
        if (res.error.code !== 'NotFound') return res;
        chains.delete(listId);
        at = listAfter(chains, listId);
        next = null;
        continue;
      }
      for (const task of res.value.value ?? []) {
        // A first round holds no removals; should one come, it says nothing a backfill needs.
        if (!task.id || (!incremental && task['@removed'])) continue;
        const change = toTaskChange(task, listId, scope, receivedAt);
        changes.set(`${change.externalId}\u0000${change.eventKey}`, change);
      }
      const nextLink = res.value['@odata.nextLink'];
      const deltaLink = res.value['@odata.deltaLink'];
      if (nextLink) next = nextLink;
      else if (deltaLink) {
        chains.set(listId, deltaLink);
        at = listAfter(chains, listId);
        next = null;
      } else return err({ code: 'Transient', message: 'tasks delta page without nextLink or deltaLink' });
    }
    return ok({ changes: [...changes.values()], state: { ...state, chains, at, next } });
  }

  /** The mailbox's task lists (a plain listing, for writes and subscriptions). */
  async function allLists(ctx: ConnectionContext): Promise<ConnectorResult<TodoTaskList[]>> {
    const lists: TodoTaskList[] = [];
    let url = '/me/todo/lists';
    for (let pages = 0; pages < MAX_LIST_PAGES; pages++) {
      const res = await call<GraphPage<TodoTaskList>>(ctx, (c) => c.api(url).get());
      if (!res.ok) return res;
      lists.push(...(res.value.value ?? []).filter((l) => l.id));
      const nextLink = res.value['@odata.nextLink'];
      if (!nextLink) return ok(lists);
      url = nextLink;
    }
    return err({ code: 'Transient', message: `task lists did not end within ${MAX_LIST_PAGES} pages` });
  }

  const defaultListOf = (lists: readonly TodoTaskList[]): ConnectorResult<string> => {
    const found = lists.find((l) => l.wellknownListName === 'defaultList');
    return found
      ? ok(found.id)
      : err({
          code: 'NotFound',
          message: 'the mailbox has no default To Do list (wellknownListName defaultList)',
        });
  };

  /** What one push has read so far: the lists, and per list our earlier creates by key. */
  interface PushSession {
    lists?: TodoTaskList[];
    origins: Map<string, Map<string, TodoTask>>;
  }

  /**
   * Our creates in one list, by idempotency key, read once per push. To Do has no client-chosen
   * ids and no transactionId, and cannot filter tasks by an extension's data, so a create tags
   * its task with our open extension (key and entity id, in the same POST) and reads the list's
   * tasks with their extensions before creating: a retried create finds its earlier task
   * instead of making a second one. The cost is one listing of the target list per push that
   * creates.
   */
  async function originsIn(
    ctx: ConnectionContext,
    listId: string,
    session: PushSession,
  ): Promise<ConnectorResult<Map<string, TodoTask>>> {
    const cached = session.origins.get(listId);
    if (cached) return ok(cached);
    const found = new Map<string, TodoTask>();
    let url: string | undefined;
    for (;;) {
      const from = url;
      const res = await call<GraphPage<TodoTask>>(ctx, (c) =>
        from
          ? c.api(from).get()
          : c
              .api(`${listPath(listId)}/tasks`)
              .top(lookupPageSize)
              .expand('extensions')
              .get(),
      );
      if (!res.ok) return res;
      for (const task of res.value.value ?? []) {
        const origin = originOf(task);
        if (task.id && origin) found.set(origin.idempotencyKey, task);
      }
      url = res.value['@odata.nextLink'];
      if (!url) break;
    }
    session.origins.set(listId, found);
    return ok(found);
  }

  const receiptOf = (write: PushWrite, task: TodoTask, listId: string): WriteReceipt => ({
    idempotencyKey: write.idempotencyKey,
    externalId: taskExternalId(listId, task.id),
    ...(task['@odata.etag'] ? { providerVersion: task['@odata.etag'] } : {}),
    contentHash: contentHash({ ...toTaskFields(task, listId) }),
  });

  /** A task as read now, as the change a pull of this version reports; gone → its tombstone. */
  async function currentOf(
    ctx: ConnectionContext,
    listId: string,
    taskId: string,
  ): Promise<ConnectorResult<SourceChangeInput | undefined>> {
    const res = await call<TodoTask>(ctx, (c) => c.api(taskPath(listId, taskId)).get());
    const scope = scopeOf(ctx);
    if (res.ok) return ok(res.value.id ? toTaskChange(res.value, listId, scope, new Date(now())) : undefined);
    if (res.error.code !== 'NotFound') return res;
    return ok(
      toTaskChange({ id: taskId, '@removed': { reason: 'deleted' } }, listId, scope, new Date(now())),
    );
  }

  const withIfMatch = (req: GraphRequest, version: string | undefined): GraphRequest =>
    version === undefined ? req : req.header('If-Match', version);

  async function pushOne(
    ctx: ConnectionContext,
    write: PushWrite,
    body: TodoTaskWrite,
    session: PushSession,
  ): Promise<ConnectorResult<WriteReceipt>> {
    if (write.op === 'create') {
      if (!session.lists) {
        const lists = await allLists(ctx);
        if (!lists.ok) return lists;
        session.lists = lists.value;
      }
      const lists = session.lists;
      // A list of this mailbox the fields name, else the default list (`listId` may be another provider's).
      const named = typeof write.fields.listId === 'string' ? write.fields.listId : undefined;
      let listId = named && lists.some((l) => l.id === named) ? named : undefined;
      if (listId === undefined) {
        const fallback = defaultListOf(lists);
        if (!fallback.ok) return fallback;
        listId = fallback.value;
      }
      const target = listId;
      const known = await originsIn(ctx, target, session);
      if (!known.ok) return known;
      const earlier = known.value.get(write.idempotencyKey);
      if (earlier) return ok(receiptOf(write, earlier, target));
      const request = {
        ...body,
        title: body.title ?? '',
        extensions: [originExtension(write.idempotencyKey, write.entityId)],
      };
      // No retry inside: a create that failed late may have landed; the next push finds its extension.
      const res = await call<TodoTask>(ctx, (c) => c.api(`${listPath(target)}/tasks`).post(request), 0);
      if (!res.ok) {
        session.origins.delete(target);
        return res;
      }
      known.value.set(write.idempotencyKey, res.value);
      return ok(receiptOf(write, res.value, target));
    }
    const target = splitExternalId(write.externalId ?? '')!;
    const path = taskPath(target.listId, target.taskId);
    if (write.op === 'update') {
      const res = await call<TodoTask>(ctx, (c) =>
        withIfMatch(c.api(path), write.expectedVersion).patch(body),
      );
      return res.ok ? ok(receiptOf(write, res.value, target.listId)) : refused(res.error);
    }
    const res = await call<void>(ctx, (c) => withIfMatch(c.api(path), write.expectedVersion).delete());
    // Already gone is what a retried delete finds: done.
    if (res.ok || res.error.code === 'NotFound')
      return ok({
        idempotencyKey: write.idempotencyKey,
        externalId: write.externalId!,
        contentHash: contentHash({}),
      });
    return refused(res.error);

    /** A 412 (If-Match) names this write as the one at fault, with the task read once for `current`. */
    async function refused(error: ConnectorError): Promise<ConnectorResult<WriteReceipt>> {
      if (error.code !== 'Conflict' || write.expectedVersion === undefined) return err(error);
      const current = await currentOf(ctx, target.listId, target.taskId);
      return err({
        ...error,
        failedKeys: [write.idempotencyKey],
        ...(current.ok && current.value ? { current: [current.value] } : {}),
      });
    }
  }

  /**
   * If-Match makes each write atomic, but writes go one by one: a 412 on the third would leave
   * the first two applied (and their receipts lost with the error). So a push of several writes
   * with conditional ones reads those tasks first and compares etags (see `checkVersions`); a
   * task read without an id counts as gone. A push of one write needs no read: its If-Match is
   * the check.
   */
  const versionCheck: VersionCheck<{ listId: string; taskId: string }, TodoTask> = {
    provider: 'microsoft-todo',
    noun: 'task',
    ifMatch: true,
    namesIds: true,
    // bodiesOf has refused any update or delete whose id does not split.
    target: splitExternalId,
    read: (ctx, { listId, taskId }) => call<TodoTask>(ctx, (c) => c.api(taskPath(listId, taskId)).get()),
    isGone: (task) => !task.id,
    versionOf: (task) => task['@odata.etag'],
    toChange: (ctx, task, { listId }) => toTaskChange(task, listId, scopeOf(ctx), new Date(now())),
  };

  /** Every write's body, or the first write we cannot send (nothing is written then). */
  function bodiesOf(writes: readonly PushWrite[]): ConnectorResult<TodoTaskWrite[]> {
    const bodies: TodoTaskWrite[] = [];
    for (const write of writes) {
      const refuse = (why: string) => err({ code: 'Validation' as const, message: `microsoft-todo: ${why}` });
      if (write.entityType !== 'task') return refuse(`cannot write ${write.entityType}`);
      if (write.op === 'merge') return refuse('To Do merges no tasks');
      if (write.op !== 'create' && !splitExternalId(write.externalId ?? ''))
        return refuse(`${write.op} needs an externalId <list>/<task>, got ${write.externalId ?? 'none'}`);
      const body = toTodoTask(write.fields);
      if (!body.ok) return refuse(body.error);
      bodies.push(body.value);
    }
    return ok(bodies);
  }

  return {
    provider: 'microsoft-todo',
    entities: ['task'],
    writable: ['task'],
    identifyAccount: identifyMicrosoftAccount,

    async backfill(ctx, cursor): Promise<ConnectorResult<PullPage>> {
      const prior = readCursor(cursor);
      let state: TodoCursor;
      if (prior?.phase === 'backfill' && prior.at !== null) state = prior;
      else {
        // A new backfill: the lists as they are now, each list's first round from its start.
        const round = await listRound(ctx, undefined);
        if (!round.ok) return round;
        const chains = new Map<string, string | null>(round.value.live.map((id) => [id, null]));
        state = {
          phase: 'backfill',
          lists: round.value.deltaLink,
          chains,
          at: listAfter(chains, null),
          next: null,
          seen: 0,
        };
      }
      const res = await readTasks(ctx, state, false);
      if (!res.ok) return res;
      const { changes } = res.value;
      const seen = state.seen + changes.length;
      const done = res.value.state.at === null;
      return ok({
        changes,
        // Done: every list's deltaLink is as of its first round, so pulls miss nothing since.
        cursor: writeCursor({ ...res.value.state, phase: done ? 'pull' : 'backfill', seen: done ? 0 : seen }),
        done,
        progress: { seen },
      });
    },

    async pull(ctx, cursor): Promise<ConnectorResult<PullPage>> {
      const prior = readCursor(cursor);
      if (prior?.phase !== 'pull')
        return err({
          code: 'CursorInvalid',
          message: 'not a microsoft-todo pull cursor (no deltaLinks): backfill first',
        });
      let state = prior;
      if (state.at === null) {
        // A new pass starts with what became of the lists: a new one starts its own chain from
        // its first round; a deleted one's chain ends. Graph names only the deleted list, and
        // its tasks' own delta is gone with it (404), so its tasks get no tombstones here: that
        // would take every task id of every list in the cursor, which is rewritten on each
        // page. The sync stage holds those records (external ids `<list id>/…`).
        const round = await listRound(ctx, state.lists);
        if (!round.ok) return round;
        const chains = new Map(state.chains);
        for (const id of round.value.removed) chains.delete(id);
        for (const id of round.value.live) if (!chains.has(id)) chains.set(id, null);
        state = {
          ...state,
          lists: round.value.deltaLink,
          chains,
          at: listAfter(chains, null),
          next: null,
          seen: 0,
        };
      }
      const res = await readTasks(ctx, state, true);
      if (!res.ok) return res;
      const { changes } = res.value;
      const seen = state.seen + changes.length;
      const done = res.value.state.at === null;
      return ok({
        changes,
        cursor: writeCursor({ ...res.value.state, seen: done ? 0 : seen }),
        done,
        progress: { seen },
      });
    },

    // Graph signs nothing: the clientState each subscription was made with is the proof.
    verifyWebhook: verifyGraphNotification,
    // Notifications are hints only: the truth comes from a pull (delta).
    parseWebhook: (request) => parseGraphNotification(request, 'To Do tasks'),

    async push(ctx, writes) {
      const bodies = bodiesOf(writes);
      if (!bodies.ok) return bodies;
      const checked = await checkVersions(ctx, writes, versionCheck);
      if (!checked.ok) return checked;
      const session: PushSession = { origins: new Map() };
      const receipts: WriteReceipt[] = [];
      for (const [i, write] of writes.entries()) {
        const res = await pushOne(ctx, write, bodies.value[i]!, session);
        if (!res.ok) return res;
        receipts.push(res.value);
      }
      return ok(receipts);
    },

    /**
     * Graph subscribes to one list's tasks at a time (`/me/todo/lists/{id}/tasks`) and the
     * contract keeps one subscription per connection: this one watches the default list, where
     * most tasks live and where our creates go. Changes in the other lists are caught by the
     * scheduled pulls, which read every list.
     */
    async subscribe(ctx, callbackUrl, token): Promise<ConnectorResult<Subscription>> {
      if (token === '' || token.length > MAX_CLIENT_STATE)
        return err({
          code: 'Validation',
          message: `clientState must be 1 to ${MAX_CLIENT_STATE} characters`,
        });
      const lists = await allLists(ctx);
      if (!lists.ok) return lists;
      const listId = defaultListOf(lists.value);
      if (!listId.ok) return listId;
      const expirationDateTime = new Date(now() + subscriptionTtlMs).toISOString();
      const request = {
        changeType: 'created,updated,deleted',
        notificationUrl: callbackUrl,
        lifecycleNotificationUrl: callbackUrl,
        resource: `${listPath(listId.value)}/tasks`,
        expirationDateTime,
        clientState: token,
      };
      // No retry inside: a subscription made by a failed attempt would notify under an id we never stored.
      const res = await call<GraphSubscription>(ctx, (c) => c.api('/subscriptions').post(request), 0);
      if (!res.ok) return res;
      if (!res.value.id)
        return err({ code: 'Transient', message: 'Graph answered a subscription without an id' });
      return ok({
        id: res.value.id,
        expiresAt: new Date(res.value.expirationDateTime ?? expirationDateTime),
      });
    },

    async unsubscribe(ctx, subscription) {
      const res = await call<void>(ctx, (c) =>
        c.api(`/subscriptions/${encodeURIComponent(subscription.id)}`).delete(),
      );
      return res.ok || res.error.code === 'NotFound' ? ok(undefined) : res;
    },
  };
}

export const microsoftTodoConnector: Connector = createMicrosoftTodoConnector();
