import { err, ok, type SourceChangeInput } from '@syncline/core';
import { gmail, type gmail_v1 } from 'googleapis/build/src/apis/gmail';
import type {
  ConnectionContext,
  Connector,
  ConnectorResult,
  Cursor,
  PullPage,
  WebhookOutcome,
  WebhookRequest,
  WebhookSecrets,
} from '../contract/connector';
import {
  constantTimeEqual,
  googleCall,
  googleRootUrl,
  header,
  identifyGoogleAccount,
  type RetryPolicy,
} from '../google-common';
import { METADATA_HEADERS, toEmailActivityChange, toEmailTombstone } from './gmail-message.mapper';

export interface GmailOptions {
  /** messages.list / history.list page size (Gmail: 100 by default, 500 at most). */
  pageSize?: number;
  /** Bounds a (re)backfill, in Gmail search syntax; default the last year. `''` = everything. */
  backfillQuery?: string;
  /** Pub/Sub topic users.watch publishes to (`projects/<p>/topics/<t>`). */
  topicName?: string;
  /** messages.get calls in flight at once. */
  concurrency?: number;
  retry?: Partial<RetryPolicy>;
  now?: () => number;
}

/**
 * Gmail quota units per method: the budget is charged in these, so a Gmail connection's
 * budget is sized in units per second (Gmail: 250 per user).
 */
const UNITS = { profile: 1, list: 5, get: 5, history: 2, watch: 100, stop: 50 } as const;

const CURSOR_VERSION = 1;
const USER = 'me';
/**
 * How far a watermark stays behind the start of its round: Gmail stamps messages by its own
 * clock, which may run ahead of ours, and a change stamped just before the round began may
 * reach the history a moment after the round read it.
 */
const CLOCK_SKEW_MS = 5 * 60_000;

interface GmailCursor {
  historyId: string;
  pageToken?: string;
  /**
   * When the round under way (backfill listing or history round) began, in ms; kept only
   * between its pages. A cursor stored without it finishes its round without a watermark.
   */
  startedAt?: number;
  seen: number;
}

function readCursor(cursor: Cursor): GmailCursor | undefined {
  if (cursor.v !== CURSOR_VERSION || typeof cursor.historyId !== 'string' || !cursor.historyId)
    return undefined;
  return {
    historyId: cursor.historyId,
    ...(typeof cursor.pageToken === 'string' && cursor.pageToken ? { pageToken: cursor.pageToken } : {}),
    ...(typeof cursor.startedAt === 'number' && Number.isFinite(cursor.startedAt)
      ? { startedAt: cursor.startedAt }
      : {}),
    seen: typeof cursor.seen === 'number' ? cursor.seen : 0,
  };
}

const writeCursor = (c: GmailCursor): Cursor => ({
  v: CURSOR_VERSION,
  historyId: c.historyId,
  pageToken: c.pageToken ?? null,
  startedAt: c.startedAt ?? null,
  seen: c.seen,
});

/**
 * What the page that finishes a round guarantees: every change before the round began (less
 * the skew) is delivered. Nothing when the round's start is not known.
 */
const watermarkOf = (startedAt: number | undefined): { watermark?: Date } =>
  startedAt === undefined ? {} : { watermark: new Date(startedAt - CLOCK_SKEW_MS) };

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export function createGmailConnector(options: GmailOptions = {}): Connector {
  const pageSize = options.pageSize ?? 100;
  const backfillQuery = options.backfillQuery ?? 'newer_than:1y';
  const topicName = options.topicName ?? 'projects/syncline/topics/gmail-push';
  const concurrency = options.concurrency ?? 5;
  const now = options.now ?? Date.now;
  const clients = new Map<string, gmail_v1.Gmail>();
  const api = (ctx: ConnectionContext) => {
    const rootUrl = googleRootUrl(ctx);
    let client = clients.get(rootUrl);
    if (!client) {
      client = gmail({ version: 'v1', rootUrl });
      clients.set(rootUrl, client);
    }
    return client;
  };
  const call = <T>(ctx: ConnectionContext, cost: number, fn: Parameters<typeof googleCall<T>>[1]) =>
    googleCall<T>(ctx, fn, { cost, ...(options.retry ? { retry: options.retry } : {}) });

  /** Metadata of each message, in order; messages gone in between (404) are skipped. */
  async function fetchMessages(
    ctx: ConnectionContext,
    ids: readonly string[],
  ): Promise<ConnectorResult<gmail_v1.Schema$Message[]>> {
    const results = await mapLimit(ids, concurrency, (id) =>
      call<gmail_v1.Schema$Message>(ctx, UNITS.get, (o) =>
        api(ctx).users.messages.get(
          { userId: USER, id, format: 'metadata', metadataHeaders: [...METADATA_HEADERS] },
          o,
        ),
      ),
    );
    const messages: gmail_v1.Schema$Message[] = [];
    for (const r of results) {
      if (r.ok) messages.push(r.value);
      else if (r.error.code !== 'NotFound') return r;
    }
    return ok(messages);
  }

  const scopeOf = (ctx: ConnectionContext) => ({
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
  });

  return {
    provider: 'gmail',
    entities: ['email_activity'],
    writable: [],
    identifyAccount: identifyGoogleAccount,

    async backfill(ctx, cursor): Promise<ConnectorResult<PullPage>> {
      let state = readCursor(cursor);
      if (!state?.pageToken) {
        const startedAt = now();
        // The history position before listing: anything that arrives meanwhile is pulled later.
        const profile = await call<gmail_v1.Schema$Profile>(ctx, UNITS.profile, (o) =>
          api(ctx).users.getProfile({ userId: USER }, o),
        );
        if (!profile.ok) return profile;
        if (!profile.value.historyId)
          return err({ code: 'Transient', message: 'getProfile without historyId' });
        state = { historyId: profile.value.historyId, startedAt, seen: 0 };
      }
      const list = await call<gmail_v1.Schema$ListMessagesResponse>(ctx, UNITS.list, (o) =>
        api(ctx).users.messages.list(
          {
            userId: USER,
            maxResults: pageSize,
            ...(state.pageToken ? { pageToken: state.pageToken } : {}),
            ...(backfillQuery ? { q: backfillQuery } : {}),
          },
          o,
        ),
      );
      if (!list.ok) return list;
      const ids = (list.value.messages ?? []).flatMap((m) => (m.id ? [m.id] : []));
      const messages = await fetchMessages(ctx, ids);
      if (!messages.ok) return messages;
      const receivedAt = new Date(now());
      const changes = messages.value.map((m) => toEmailActivityChange(m, scopeOf(ctx), receivedAt));
      const seen = state.seen + changes.length;
      const next = list.value.nextPageToken;
      const progress = {
        seen,
        ...(typeof list.value.resultSizeEstimate === 'number'
          ? { estimatedTotal: list.value.resultSizeEstimate }
          : {}),
      };
      if (next)
        return ok({
          changes,
          cursor: writeCursor({ ...state, pageToken: next, seen }),
          done: false,
          progress,
        });
      return ok({
        changes,
        cursor: writeCursor({ historyId: state.historyId, seen: 0 }),
        done: true,
        progress,
        ...watermarkOf(state.startedAt),
      });
    },

    async pull(ctx, cursor): Promise<ConnectorResult<PullPage>> {
      const state = readCursor(cursor);
      if (!state) return err({ code: 'CursorInvalid', message: 'no history id: backfill first' });
      // A round begins where the last one ended (no page token) and reads every history record
      // Gmail holds at that moment, so its start is taken before the first request.
      const startedAt = state.pageToken ? state.startedAt : now();
      const res = await call<gmail_v1.Schema$ListHistoryResponse>(ctx, UNITS.history, (o) =>
        api(ctx).users.history.list(
          {
            userId: USER,
            startHistoryId: state.historyId,
            // Label changes too: labelIds (and direction) are fields of the activity.
            historyTypes: ['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved'],
            maxResults: pageSize,
            ...(state.pageToken ? { pageToken: state.pageToken } : {}),
          },
          o,
        ),
      );
      if (!res.ok) {
        // Gmail's answer to a history id it no longer keeps: a full (bounded) resync.
        if (res.error.code === 'NotFound') return err({ ...res.error, code: 'CursorInvalid' });
        return res;
      }
      // Last record per message wins: added (or relabelled) then deleted within the page is a
      // delete; a relabelled message is read again and reported as an upsert.
      const latest = new Map<string, 'added' | 'deleted'>();
      for (const record of res.value.history ?? []) {
        const touched = [
          ...(record.messagesAdded ?? []),
          ...(record.labelsAdded ?? []),
          ...(record.labelsRemoved ?? []),
        ];
        for (const m of touched) if (m.message?.id) latest.set(m.message.id, 'added');
        for (const m of record.messagesDeleted ?? []) if (m.message?.id) latest.set(m.message.id, 'deleted');
      }
      const added = [...latest].filter(([, what]) => what === 'added').map(([id]) => id);
      const messages = await fetchMessages(ctx, added);
      if (!messages.ok) return messages;
      const receivedAt = new Date(now());
      const byId = new Map(messages.value.map((m) => [m.id, m]));
      const changes: SourceChangeInput[] = [];
      for (const [id, what] of latest) {
        const message = byId.get(id);
        if (what === 'deleted') changes.push(toEmailTombstone(id, scopeOf(ctx), receivedAt));
        else if (message) changes.push(toEmailActivityChange(message, scopeOf(ctx), receivedAt));
      }
      const seen = state.seen + changes.length;
      const next = res.value.nextPageToken;
      if (next)
        return ok({
          changes,
          cursor: writeCursor({ historyId: state.historyId, pageToken: next, startedAt, seen }),
          done: false,
          progress: { seen },
        });
      return ok({
        changes,
        cursor: writeCursor({ historyId: res.value.historyId ?? state.historyId, seen: 0 }),
        done: true,
        progress: { seen },
        ...watermarkOf(startedAt),
      });
    },

    verifyWebhook(request: WebhookRequest, secrets: WebhookSecrets) {
      const expected = secrets.pushBearerToken;
      if (!expected) return err({ code: 'Validation', message: 'no push token configured' });
      const auth = header(request, 'authorization') ?? '';
      const bearer = /^Bearer\s+(.+)$/i.exec(auth)?.[1] ?? '';
      // The push endpoint may carry the shared secret in its URL (`?token=`) instead.
      let fromUrl = '';
      try {
        fromUrl = new URL(request.url).searchParams.get('token') ?? '';
      } catch {
        fromUrl = '';
      }
      const bearerOk = constantTimeEqual(bearer, expected);
      const urlOk = constantTimeEqual(fromUrl, expected);
      return bearerOk || urlOk
        ? ok(undefined)
        : err({ code: 'Validation', message: 'push token does not match' });
    },

    parseWebhook(request: WebhookRequest): ConnectorResult<WebhookOutcome> {
      try {
        const body = JSON.parse(request.rawBody) as { message?: { data?: unknown } };
        if (typeof body.message?.data !== 'string') throw new Error('no message.data');
        const data = JSON.parse(Buffer.from(body.message.data, 'base64url').toString('utf8')) as {
          emailAddress?: unknown;
          historyId?: unknown;
        };
        if (typeof data.emailAddress !== 'string' || data.historyId === undefined)
          throw new Error('no historyId');
        return ok({
          kind: 'pull',
          reason: `gmail ${data.emailAddress} at history ${String(data.historyId)}`,
        });
      } catch (error) {
        return err({ code: 'Validation', message: `not a Gmail push: ${(error as Error).message}` });
      }
    },

    async push(_ctx, writes) {
      if (writes.length === 0) return ok([]);
      return err({ code: 'Validation', message: 'gmail is read-only in Syncline' });
    },

    /** users.watch: the Pub/Sub push subscription (URL, token) is configured on the topic, not here. */
    async subscribe(ctx) {
      const res = await call<gmail_v1.Schema$WatchResponse>(ctx, UNITS.watch, (o) =>
        api(ctx).users.watch({ userId: USER, requestBody: { topicName } }, o),
      );
      if (!res.ok) return res;
      return ok({
        id: `gmail-watch:${ctx.externalAccountId}`,
        ...(res.value.historyId ? { resourceId: res.value.historyId } : {}),
        expiresAt: new Date(Number(res.value.expiration ?? now())),
      });
    },

    async unsubscribe(ctx) {
      const res = await call<void>(ctx, UNITS.stop, (o) => api(ctx).users.stop({ userId: USER }, o));
      return res.ok || res.error.code === 'NotFound' ? ok(undefined) : res;
    },
  };
}

export const gmailConnector: Connector = createGmailConnector();
