import { randomUUID } from 'node:crypto';
import { err, ok, type SourceChangeInput } from '@syncline/core';
import { calendar, type calendar_v3 } from 'googleapis/build/src/apis/calendar';
import type {
  ConnectionContext,
  Connector,
  ConnectorError,
  ConnectorResult,
  Cursor,
  PullPage,
  PushWrite,
  Subscription,
  WebhookOutcome,
  WebhookRequest,
  WebhookSecrets,
  WriteReceipt,
} from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import {
  constantTimeEqual,
  googleCall,
  googleRootUrl,
  header,
  identifyGoogleAccount,
  type RetryPolicy,
} from '../google-common';
import { checkVersions, type VersionCheck } from '../shared/check-versions';
import {
  eventIdFor,
  originTag,
  toGoogleEvent,
  toMeetingChange,
  toMeetingFields,
} from './calendar-event.mapper';

export interface GoogleCalendarOptions {
  /** events.list page size (Google: 250 by default, 2500 at most). */
  pageSize?: number;
  retry?: Partial<RetryPolicy>;
  /** Channel lifetime asked for on watch (Google caps it; default 7 days). */
  channelTtlMs?: number;
  now?: () => number;
}

const CURSOR_VERSION = 1;
const CALENDAR_ID = 'primary';
/**
 * How far a watermark stays behind the start of its round: Google stamps `updated` by its own
 * clock, which may run ahead of ours, and an edit stamped just before the round began may
 * reach the listing a moment after the round read it.
 */
const CLOCK_SKEW_MS = 5 * 60_000;

interface CalendarCursor {
  pageToken?: string;
  syncToken?: string;
  /**
   * When the round under way (full listing or sync-token round) began, in ms; kept only
   * between its pages. A cursor stored without it finishes its round without a watermark.
   */
  startedAt?: number;
  seen: number;
}

function readCursor(cursor: Cursor): CalendarCursor | undefined {
  if (cursor.v !== CURSOR_VERSION) return undefined;
  const str = (k: string) => (typeof cursor[k] === 'string' ? (cursor[k] as string) : undefined);
  return {
    ...(str('pageToken') ? { pageToken: str('pageToken') } : {}),
    ...(str('syncToken') ? { syncToken: str('syncToken') } : {}),
    ...(typeof cursor.startedAt === 'number' && Number.isFinite(cursor.startedAt)
      ? { startedAt: cursor.startedAt }
      : {}),
    seen: typeof cursor.seen === 'number' ? cursor.seen : 0,
  };
}

const writeCursor = (c: CalendarCursor): Cursor => ({
  v: CURSOR_VERSION,
  pageToken: c.pageToken ?? null,
  syncToken: c.syncToken ?? null,
  startedAt: c.startedAt ?? null,
  seen: c.seen,
});

/**
 * What the page that finishes a round guarantees: every change before the round began (less
 * the skew) is delivered. Nothing when the round's start is not known.
 */
const watermarkOf = (startedAt: number | undefined): { watermark?: Date } =>
  startedAt === undefined ? {} : { watermark: new Date(startedAt - CLOCK_SKEW_MS) };

export function createGoogleCalendarConnector(options: GoogleCalendarOptions = {}): Connector {
  const pageSize = options.pageSize ?? 250;
  const now = options.now ?? Date.now;
  const clients = new Map<string, calendar_v3.Calendar>();
  const api = (ctx: ConnectionContext) => {
    const rootUrl = googleRootUrl(ctx);
    let client = clients.get(rootUrl);
    if (!client) {
      client = calendar({ version: 'v3', rootUrl });
      clients.set(rootUrl, client);
    }
    return client;
  };
  const call = <T>(ctx: ConnectionContext, fn: Parameters<typeof googleCall<T>>[1]) =>
    googleCall<T>(ctx, fn, options.retry ? { retry: options.retry } : {});

  /** One events.list page, full (no sync token) or incremental, as a PullPage. */
  async function listPage(
    ctx: ConnectionContext,
    state: CalendarCursor,
    incremental: boolean,
  ): Promise<ConnectorResult<PullPage>> {
    const params: calendar_v3.Params$Resource$Events$List = {
      calendarId: CALENDAR_ID,
      maxResults: pageSize,
      ...(state.pageToken ? { pageToken: state.pageToken } : {}),
      ...(incremental ? { syncToken: state.syncToken } : { showDeleted: false }),
    };
    const res = await call<calendar_v3.Schema$Events>(ctx, (o) => api(ctx).events.list(params, o));
    if (!res.ok) return res;
    const receivedAt = new Date(now());
    const scope = { workspaceId: ctx.workspaceId, connectionId: ctx.connectionId };
    const items = res.value.items ?? [];
    // A full sync lists live events only; a cancelled one there is an exception of a recurring event.
    const changes = items
      .filter((e) => e.id && (incremental || e.status !== 'cancelled'))
      .map((e) => toMeetingChange(e, scope, receivedAt));
    const seen = state.seen + changes.length;
    const progress = { seen };
    if (res.value.nextPageToken) {
      return ok({
        changes,
        cursor: writeCursor({ ...state, pageToken: res.value.nextPageToken, seen }),
        done: false,
        progress,
      });
    }
    if (!res.value.nextSyncToken) {
      return err({ code: 'Transient', message: 'events.list ended without nextSyncToken' });
    }
    return ok({
      changes,
      cursor: writeCursor({ syncToken: res.value.nextSyncToken, seen: incremental ? 0 : seen }),
      done: true,
      progress,
      ...watermarkOf(state.startedAt),
    });
  }

  async function pushOne(ctx: ConnectionContext, write: PushWrite): Promise<ConnectorResult<WriteReceipt>> {
    const receipt = (event: calendar_v3.Schema$Event): WriteReceipt => ({
      idempotencyKey: write.idempotencyKey,
      externalId: event.id ?? write.externalId ?? '',
      ...(event.etag ? { providerVersion: event.etag } : {}),
      contentHash: contentHash(event.status === 'cancelled' ? {} : { ...toMeetingFields(event) }),
    });
    if (write.entityType !== 'meeting') {
      return err({ code: 'Validation', message: `google-calendar cannot write ${write.entityType}` });
    }
    if (write.op === 'merge') return err({ code: 'Validation', message: 'Google Calendar merges no events' });
    if (write.op === 'create') {
      const eventId = eventIdFor(write.idempotencyKey);
      const requestBody = {
        ...toGoogleEvent(write.fields),
        id: eventId,
        extendedProperties: originTag(write.entityId),
      };
      const res = await call<calendar_v3.Schema$Event>(ctx, (o) =>
        api(ctx).events.insert({ calendarId: CALENDAR_ID, requestBody, sendUpdates: 'none' }, o),
      );
      if (res.ok) return ok(receipt(res.value));
      // Our id is already taken: an earlier attempt with this key made the event.
      if (res.error.reason !== 'duplicate') return res;
      const existing = await call<calendar_v3.Schema$Event>(ctx, (o) =>
        api(ctx).events.get({ calendarId: CALENDAR_ID, eventId }, o),
      );
      return existing.ok ? ok(receipt(existing.value)) : existing;
    }
    if (!write.externalId) return err({ code: 'Validation', message: `${write.op} without externalId` });
    const eventId = write.externalId;
    const ifMatch = (o: { headers: { Authorization: string }; retry: false }) =>
      write.expectedVersion ? { ...o, headers: { ...o.headers, 'If-Match': write.expectedVersion } } : o;
    if (write.op === 'update') {
      const requestBody = { ...toGoogleEvent(write.fields), extendedProperties: originTag(write.entityId) };
      const res = await call<calendar_v3.Schema$Event>(ctx, (o) =>
        api(ctx).events.patch(
          { calendarId: CALENDAR_ID, eventId, requestBody, sendUpdates: 'none' },
          ifMatch(o),
        ),
      );
      return res.ok ? ok(receipt(res.value)) : await refused(res.error);
    }
    const res = await call<void>(ctx, (o) =>
      api(ctx).events.delete({ calendarId: CALENDAR_ID, eventId, sendUpdates: 'none' }, ifMatch(o)),
    );
    // Already gone (410 deleted, 404) is what a retried delete finds: done.
    if (res.ok || res.error.code === 'NotFound') {
      return ok({ idempotencyKey: write.idempotencyKey, externalId: eventId, contentHash: contentHash({}) });
    }
    return await refused(res.error);

    /**
     * A 412 (If-Match) names this write as the one at fault, and the event is read once
     * (events.get) for `current`; a failed read only leaves `current` out.
     */
    async function refused(error: ConnectorError): Promise<ConnectorResult<WriteReceipt>> {
      if (error.code !== 'Conflict' || write.expectedVersion === undefined) return err(error);
      const now = await call<calendar_v3.Schema$Event>(ctx, (o) =>
        api(ctx).events.get({ calendarId: CALENDAR_ID, eventId }, o),
      );
      return err({
        ...error,
        failedKeys: [write.idempotencyKey],
        ...(now.ok && now.value.id ? { current: [currentChange(ctx, now.value)] } : {}),
      });
    }
  }

  /** An event as read now, as the change a pull of this version reports (same event key). */
  const currentChange = (ctx: ConnectionContext, event: calendar_v3.Schema$Event): SourceChangeInput =>
    toMeetingChange(event, { workspaceId: ctx.workspaceId, connectionId: ctx.connectionId }, new Date(now()));

  /**
   * If-Match makes each write atomic, but writes go one by one: a 412 on the third would leave
   * the first two applied (and their receipts lost with the error). So a push of several writes
   * with conditional ones reads those events first (events.get, budgeted) and compares etags
   * (see `checkVersions`); a cancelled event counts as gone. A push of one write needs no read:
   * its If-Match is the check.
   */
  const versionCheck: VersionCheck<string, calendar_v3.Schema$Event> = {
    provider: 'google-calendar',
    noun: 'event',
    ifMatch: true,
    namesIds: false,
    target: (externalId) => externalId,
    read: (ctx, eventId) =>
      call<calendar_v3.Schema$Event>(ctx, (o) =>
        api(ctx).events.get({ calendarId: CALENDAR_ID, eventId }, o),
      ),
    isGone: (event) => event.status === 'cancelled',
    versionOf: (event) => event.etag,
    toChange: (ctx, event) => (event.id ? currentChange(ctx, event) : undefined),
  };

  return {
    provider: 'google-calendar',
    entities: ['meeting'],
    writable: ['meeting'],
    readOnlyFields: { meeting: ['organizer', 'iCalUID'] },
    identifyAccount: identifyGoogleAccount,

    async backfill(ctx, cursor) {
      const state = readCursor(cursor);
      // Start (or restart) unless we are in the middle of a full listing.
      const from = state?.pageToken && !state.syncToken ? state : { seen: 0, startedAt: now() };
      return listPage(ctx, from, false);
    },

    async pull(ctx, cursor) {
      const state = readCursor(cursor);
      if (!state?.syncToken) return err({ code: 'CursorInvalid', message: 'no sync token: backfill first' });
      // A round begins at the stored sync token (no page token) and reads every change Google
      // holds at that moment, so its start is taken before the first request.
      return listPage(ctx, state.pageToken ? state : { ...state, startedAt: now() }, true);
    },

    verifyWebhook(request: WebhookRequest, secrets: WebhookSecrets) {
      const id = header(request, 'x-goog-channel-id') ?? '';
      const token = header(request, 'x-goog-channel-token') ?? '';
      const resourceId = header(request, 'x-goog-resource-id');
      let matched = false;
      // Every registered channel is compared, so timing says nothing about which one matched.
      for (const channel of secrets.channels ?? []) {
        const idOk = constantTimeEqual(id, channel.id);
        const tokenOk = constantTimeEqual(token, channel.token);
        const resourceOk = channel.resourceId === undefined || resourceId === channel.resourceId;
        if (idOk && tokenOk && resourceOk && id !== '' && token !== '') matched = true;
      }
      return matched
        ? ok(undefined)
        : err({ code: 'Validation', message: 'unknown channel or wrong channel token' });
    },

    parseWebhook(request: WebhookRequest): ConnectorResult<WebhookOutcome> {
      const state = header(request, 'x-goog-resource-state');
      if (!state) return err({ code: 'Validation', message: 'no X-Goog-Resource-State' });
      // `sync` only opens the channel; a pull then finds nothing new, which is harmless.
      return ok({
        kind: 'pull',
        reason: state === 'sync' ? 'calendar channel opened (sync)' : `calendar ${state}`,
      });
    },

    async push(ctx, writes) {
      const checked = await checkVersions(ctx, writes, versionCheck);
      if (!checked.ok) return checked;
      const receipts: WriteReceipt[] = [];
      for (const write of writes) {
        const res = await pushOne(ctx, write);
        if (!res.ok) return res;
        receipts.push(res.value);
      }
      return ok(receipts);
    },

    async subscribe(ctx, callbackUrl, token): Promise<ConnectorResult<Subscription>> {
      const requestBody: calendar_v3.Schema$Channel = {
        id: randomUUID(),
        type: 'web_hook',
        address: callbackUrl,
        token,
        ...(options.channelTtlMs ? { expiration: String(now() + options.channelTtlMs) } : {}),
      };
      const res = await call<calendar_v3.Schema$Channel>(ctx, (o) =>
        api(ctx).events.watch({ calendarId: CALENDAR_ID, requestBody }, o),
      );
      if (!res.ok) return res;
      return ok({
        id: res.value.id ?? requestBody.id ?? '',
        ...(res.value.resourceId ? { resourceId: res.value.resourceId } : {}),
        expiresAt: new Date(Number(res.value.expiration ?? now())),
      });
    },

    async unsubscribe(ctx, subscription) {
      const res = await call<void>(ctx, (o) =>
        api(ctx).channels.stop(
          { requestBody: { id: subscription.id, resourceId: subscription.resourceId } },
          o,
        ),
      );
      return res.ok || res.error.code === 'NotFound' ? ok(undefined) : res;
    },
  };
}

export const googleCalendarConnector: Connector = createGoogleCalendarConnector();
