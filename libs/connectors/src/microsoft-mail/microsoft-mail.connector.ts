import type { Client } from '@microsoft/microsoft-graph-client';
import { err, ok, type SourceChangeInput } from '@syncline/core';
import type {
  ConnectionContext,
  Connector,
  ConnectorResult,
  Cursor,
  PullPage,
  Subscription,
} from '../contract/connector';
import {
  graphCall,
  identifyMicrosoftAccount,
  parseGraphNotification,
  type RetryPolicy,
  verifyGraphNotification,
} from '../microsoft-common';
import {
  type ChangeScope,
  type MailPlace,
  MESSAGE_SELECT,
  type OutlookMessage,
  toEmailActivityChange,
  toEmailTombstone,
} from './outlook-message.mapper';

export interface MicrosoftMailOptions {
  /**
   * Messages per delta page (`Prefer: odata.maxpagesize`; Graph's default is 10, and it may
   * send fewer than asked). 100 with our $select: each page costs one request of the
   * mailbox's 10,000 per ten minutes, and the folders' pages follow each other.
   */
  pageSize?: number;
  /** How far back a (re)backfill reads, in days of receivedDateTime (Gmail's window: a year). 0: all. */
  backfillDays?: number;
  /** Lifetime asked of a new subscription; Graph allows 4,230 minutes for messages. */
  subscriptionMinutes?: number;
  retry?: Partial<RetryPolicy>;
  now?: () => number;
}

/** The two folders a salesperson's correspondence lives in, read in this order. */
const FOLDERS = ['inbox', 'sentitems'] as const;
type Folder = (typeof FOLDERS)[number];
/** The folders whose ids tell where a message went when it left one of ours. */
const KNOWN_FOLDERS = ['inbox', 'sentitems', 'deleteditems'] as const;
type KnownFolder = (typeof KNOWN_FOLDERS)[number];

/** A moved message keeps its id only as an immutable id; every request asks for those. */
const IMMUTABLE_IDS = 'IdType="ImmutableId"';
const DEFAULT_SUBSCRIPTION_MINUTES = 4_230 - 30;
const DAY_MS = 86_400_000;
/**
 * How far a watermark stays behind the start of its run: Exchange stamps messages by its own
 * clock, which may run ahead of ours, and a change stamped just before the run began may
 * reach the delta a moment after the run read it.
 */
const CLOCK_SKEW_MS = 5 * 60_000;

const CURSOR_VERSION = 2;

/**
 * Per folder, the deltaLink of its last finished round and the nextLink of the round under
 * way, and whether the run under way (backfill or pull) has read it to its deltaLink. A run
 * reads the folders at once, a page of each still reading per call (the mailbox allows 4
 * requests at a time; the calendar takes one more), and is done when every folder is caught up.
 */
interface MailCursor {
  links: Record<Folder, { delta?: string; next?: string }>;
  /** The folders this run has read to their deltaLink. */
  caughtUp: ReadonlySet<Folder>;
  /** The mailbox owner's address, lower case (GET /me): mail from it is outbound. */
  owner: string;
  folderIds?: Record<KnownFolder, string>;
  /**
   * When the run under way began, in ms; kept only between its pages. A cursor stored without
   * it finishes its run without a watermark.
   */
  startedAt?: number;
  seen: number;
}

function readCursor(cursor: Cursor): MailCursor | undefined {
  // Version 1 read the folders in turn, `at` the one under way: those before it were caught up.
  if (cursor.v !== CURSOR_VERSION && cursor.v !== 1) return undefined;
  const str = (k: string) =>
    typeof cursor[k] === 'string' && cursor[k] !== '' ? (cursor[k] as string) : undefined;
  const link = (folder: Folder) => ({
    ...(str(`${folder}Delta`) ? { delta: str(`${folder}Delta`) } : {}),
    ...(str(`${folder}Next`) ? { next: str(`${folder}Next`) } : {}),
  });
  const at = typeof cursor.at === 'number' && cursor.at >= 0 && cursor.at < FOLDERS.length ? cursor.at : 0;
  const caughtUp = new Set(
    FOLDERS.filter((folder, index) => (cursor.v === 1 ? index < at : cursor[`${folder}CaughtUp`] === 1)),
  );
  const [inbox, sentitems, deleteditems] = KNOWN_FOLDERS.map((f) => str(`${f}Id`));
  return {
    links: { inbox: link('inbox'), sentitems: link('sentitems') },
    caughtUp,
    owner: str('owner') ?? '',
    ...(inbox && sentitems && deleteditems ? { folderIds: { inbox, sentitems, deleteditems } } : {}),
    ...(typeof cursor.startedAt === 'number' && Number.isFinite(cursor.startedAt)
      ? { startedAt: cursor.startedAt }
      : {}),
    seen: typeof cursor.seen === 'number' ? cursor.seen : 0,
  };
}

function writeCursor(c: MailCursor): Cursor {
  const out: Record<string, string | number | null> = {
    v: CURSOR_VERSION,
    owner: c.owner,
    startedAt: c.startedAt ?? null,
    seen: c.seen,
  };
  for (const folder of FOLDERS) {
    out[`${folder}Delta`] = c.links[folder].delta ?? null;
    out[`${folder}Next`] = c.links[folder].next ?? null;
    out[`${folder}CaughtUp`] = c.caughtUp.has(folder) ? 1 : 0;
  }
  for (const folder of KNOWN_FOLDERS) out[`${folder}Id`] = c.folderIds?.[folder] ?? null;
  return out;
}

/** A backfill is under way while a folder has not finished its first round. */
const backfilling = (c: MailCursor): boolean => FOLDERS.some((f) => c.links[f].delta === undefined);

/** A pull run has not read a page yet: no folder is caught up or part-way through a round. */
const runStarting = (c: MailCursor): boolean =>
  c.caughtUp.size === 0 && FOLDERS.every((f) => c.links[f].next === undefined);

/**
 * What the page that finishes a run guarantees: every change before the run began (less the
 * skew) is delivered. Nothing when the run's start is not known.
 */
const watermarkOf = (startedAt: number | undefined): { watermark?: Date } =>
  startedAt === undefined ? {} : { watermark: new Date(startedAt - CLOCK_SKEW_MS) };

interface DeltaPage {
  value?: OutlookMessage[];
  '@odata.nextLink'?: string;
  '@odata.deltaLink'?: string;
}

/** Everything the mapping needs; a delta item without it was sent in part and is read whole. */
const isComplete = (m: OutlookMessage): boolean =>
  m.receivedDateTime !== undefined && m.internetMessageId !== undefined && m.isDraft !== undefined;

export function createMicrosoftMailConnector(options: MicrosoftMailOptions = {}): Connector {
  const pageSize = options.pageSize ?? 100;
  const backfillDays = options.backfillDays ?? 365;
  const subscriptionMinutes = options.subscriptionMinutes ?? DEFAULT_SUBSCRIPTION_MINUTES;
  const now = options.now ?? Date.now;
  const prefer = `odata.maxpagesize=${pageSize}, ${IMMUTABLE_IDS}`;
  const call = <T>(ctx: ConnectionContext, fn: (client: Client) => Promise<T>) =>
    graphCall<T>(ctx, fn, options.retry ? { retry: options.retry } : {});

  const scopeOf = (ctx: ConnectionContext): ChangeScope => ({
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
  });

  /** The mailbox's own address, as Graph names it. */
  async function readOwner(ctx: ConnectionContext): Promise<ConnectorResult<string>> {
    const me = await call<{ mail?: string | null; userPrincipalName?: string | null }>(ctx, (c) =>
      c.api('/me').select(['mail', 'userPrincipalName']).get(),
    );
    if (!me.ok) return me;
    return ok((me.value.mail ?? me.value.userPrincipalName ?? '').trim().toLowerCase());
  }

  async function readFolderIds(
    ctx: ConnectionContext,
  ): Promise<ConnectorResult<Record<KnownFolder, string>>> {
    const ids: Partial<Record<KnownFolder, string>> = {};
    for (const folder of KNOWN_FOLDERS) {
      const res = await call<{ id?: string }>(ctx, (c) =>
        c.api(`/me/mailFolders/${folder}`).select('id').get(),
      );
      if (!res.ok) return res;
      if (!res.value.id) return err({ code: 'Transient', message: `mail folder ${folder} without an id` });
      ids[folder] = res.value.id;
    }
    return ok(ids as Record<KnownFolder, string>);
  }

  /** The first request of a folder's round: what we map, received in the backfill window. */
  const firstPage = (folder: Folder) => (c: Client) => {
    let request = c.api(`/me/mailFolders/${folder}/messages/delta`).select([...MESSAGE_SELECT]);
    if (backfillDays > 0) {
      const since = new Date(now() - backfillDays * DAY_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
      request = request.filter(`receivedDateTime ge ${since}`);
    }
    return request.header('Prefer', prefer).get() as Promise<DeltaPage>;
  };

  /**
   * A delta page as changes, in page order, the last per message kept. A message that left the
   * folder (`@removed`) is read again to learn what became of it:
   *
   * | now                              | reported as                                   |
   * |----------------------------------|-----------------------------------------------|
   * | gone (404)                       | tombstone                                     |
   * | in Deleted Items                 | tombstone (Outlook's delete)                  |
   * | in the other folder we follow    | upsert, as that folder's delta reports it too |
   * | elsewhere (Archive, …)           | upsert without INBOX: still mail of the owner |
   */
  async function toChanges(
    ctx: ConnectionContext,
    state: MailCursor,
    folder: Folder,
    items: readonly OutlookMessage[],
  ): Promise<ConnectorResult<{ changes: SourceChangeInput[]; state: MailCursor }>> {
    const receivedAt = new Date(now());
    const scope = scopeOf(ctx);
    let current = state;
    const changes: SourceChangeInput[] = [];
    for (const item of items) {
      if (!item.id) continue;
      if (!item['@removed'] && isComplete(item)) {
        if (!item.isDraft)
          changes.push(
            toEmailActivityChange(item, { place: folder, owner: current.owner }, scope, receivedAt),
          );
        continue;
      }
      const read = await call<OutlookMessage>(ctx, (c) =>
        c
          .api(`/me/messages/${encodeURIComponent(item.id)}`)
          .select([...MESSAGE_SELECT])
          .header('Prefer', IMMUTABLE_IDS)
          .get(),
      );
      if (!read.ok) {
        if (read.error.code !== 'NotFound') return read;
        changes.push(toEmailTombstone(item.id, scope, receivedAt));
        continue;
      }
      const message = { ...read.value, id: item.id };
      if (!current.folderIds) {
        const ids = await readFolderIds(ctx);
        if (!ids.ok) return ids;
        current = { ...current, folderIds: ids.value };
      }
      const ids = current.folderIds!;
      if (message.parentFolderId === ids.deleteditems) {
        changes.push(toEmailTombstone(item.id, scope, receivedAt, message));
        continue;
      }
      if (message.isDraft) continue;
      const place: MailPlace =
        message.parentFolderId === ids.inbox
          ? 'inbox'
          : message.parentFolderId === ids.sentitems
            ? 'sentitems'
            : 'other';
      changes.push(toEmailActivityChange(message, { place, owner: current.owner }, scope, receivedAt));
    }
    const last = new Map(changes.map((c, i) => [c.externalId, i]));
    return ok({ changes: changes.filter((c, i) => last.get(c.externalId) === i), state: current });
  }

  /**
   * Reads on from the cursor: a page of every folder the run has not caught up yet, at once,
   * their changes in folder order (one call returns while a folder has changes); `done` once
   * every folder reaches its deltaLink. Only deltaLinks stay in the cursor between runs.
   */
  async function run(ctx: ConnectionContext, start: MailCursor): Promise<ConnectorResult<PullPage>> {
    let state = start;
    const changes: SourceChangeInput[] = [];
    for (;;) {
      const reading = FOLDERS.filter((folder) => !state.caughtUp.has(folder));
      const pages = await Promise.all(
        reading.map((folder) => {
          const link = state.links[folder].next ?? state.links[folder].delta;
          return call<DeltaPage>(ctx, (c) =>
            link ? (c.api(link).header('Prefer', prefer).get() as Promise<DeltaPage>) : firstPage(folder)(c),
          );
        }),
      );
      const caughtUp = new Set(state.caughtUp);
      const links = { ...state.links };
      for (const [index, folder] of reading.entries()) {
        const res = pages[index]!;
        if (!res.ok) return res;
        const mapped = await toChanges(ctx, state, folder, res.value.value ?? []);
        if (!mapped.ok) return mapped;
        changes.push(...mapped.value.changes);
        state = { ...mapped.value.state, seen: state.seen + mapped.value.changes.length };
        const next = res.value['@odata.nextLink'];
        const delta = res.value['@odata.deltaLink'];
        if (next) links[folder] = { ...links[folder], next };
        else if (delta) {
          links[folder] = { delta };
          caughtUp.add(folder);
        } else
          return err({ code: 'Transient', message: `${folder} delta page without nextLink or deltaLink` });
      }
      state = { ...state, links, caughtUp };
      if (caughtUp.size === FOLDERS.length) {
        const { seen, startedAt } = state;
        return ok({
          changes,
          cursor: writeCursor({ ...state, caughtUp: new Set(), startedAt: undefined, seen: 0 }),
          done: true,
          progress: { seen },
          ...watermarkOf(startedAt),
        });
      }
      if (changes.length > 0)
        return ok({ changes, cursor: writeCursor(state), done: false, progress: { seen: state.seen } });
    }
  }

  return {
    provider: 'microsoft-mail',
    entities: ['email_activity'],
    writable: [],
    identifyAccount: identifyMicrosoftAccount,

    async backfill(ctx, cursor) {
      const known = readCursor(cursor);
      if (known && backfilling(known)) return run(ctx, known);
      // Every folder's first page is asked after this: what it misses came after the start.
      const startedAt = now();
      const owner = known?.owner ? ok(known.owner) : await readOwner(ctx);
      if (!owner.ok) return owner;
      return run(ctx, {
        links: { inbox: {}, sentitems: {} },
        caughtUp: new Set(),
        owner: owner.value,
        ...(known?.folderIds ? { folderIds: known.folderIds } : {}),
        startedAt,
        seen: 0,
      });
    },

    async pull(ctx, cursor) {
      const state = readCursor(cursor);
      if (!state || backfilling(state))
        return err({
          code: 'CursorInvalid',
          message: 'no deltaLinks for inbox and sentitems: backfill first',
        });
      // A run begins at the stored deltaLinks and reads every change Graph holds at that
      // moment, so its start is taken before the first request.
      const started = runStarting(state) ? { ...state, startedAt: now() } : state;
      if (started.owner !== '') return run(ctx, started);
      const owner = await readOwner(ctx);
      return owner.ok ? run(ctx, { ...started, owner: owner.value }) : owner;
    },

    verifyWebhook: verifyGraphNotification,

    parseWebhook: (request) => parseGraphNotification(request, 'outlook mail'),

    async push(_ctx, writes) {
      if (writes.length === 0) return ok([]);
      return err({ code: 'Validation', message: 'microsoft-mail is read-only in Syncline' });
    },

    /** One subscription on every folder's messages; a pull finds which of ours changed. */
    async subscribe(ctx, callbackUrl, token): Promise<ConnectorResult<Subscription>> {
      const expirationDateTime = new Date(now() + subscriptionMinutes * 60_000).toISOString();
      const res = await call<{ id?: string; expirationDateTime?: string }>(ctx, (c) =>
        c.api('/subscriptions').header('Prefer', IMMUTABLE_IDS).post({
          changeType: 'created,updated,deleted',
          notificationUrl: callbackUrl,
          lifecycleNotificationUrl: callbackUrl,
          resource: '/me/messages',
          expirationDateTime,
          clientState: token,
        }),
      );
      if (!res.ok) return res;
      if (!res.value.id) return err({ code: 'Transient', message: 'subscription created without an id' });
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

export const microsoftMailConnector: Connector = createMicrosoftMailConnector();
