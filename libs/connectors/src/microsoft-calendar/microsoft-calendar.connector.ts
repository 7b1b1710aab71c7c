import type { Client } from '@microsoft/microsoft-graph-client';
import { err, ok, type SourceChangeInput } from '@syncline/core';
import type {
  ConnectionContext,
  Connector,
  ConnectorResult,
  Cursor,
  PullPage,
  PushWrite,
  Subscription,
  WriteReceipt,
} from '../contract/connector';
import { contentHash } from '../contract/content-hash';
import {
  type GraphCallError,
  graphCall,
  identifyMicrosoftAccount,
  parseGraphNotification,
  type RetryPolicy,
  verifyGraphNotification,
} from '../microsoft-common';
import { checkVersions, type VersionCheck } from '../shared/check-versions';
import {
  type GraphEvent,
  originTag,
  roundOf,
  toGraphEvent,
  toMeetingChange,
  toMeetingFields,
  toRemovedChange,
  transactionIdFor,
} from './outlook-event.mapper';

export interface MicrosoftCalendarOptions {
  /** Events per calendarView delta page (`Prefer: odata.maxpagesize`). */
  pageSize?: number;
  /** How far back the calendar view reaches from the backfill's start, in days. */
  pastDays?: number;
  /** How far ahead it reaches, in days. */
  futureDays?: number;
  /**
   * The view's range is fixed when a backfill starts and lives in the delta tokens after. Once
   * its end is nearer than this many days, pull answers CursorInvalid so that a backfill opens
   * a range reaching `futureDays` ahead again (event keys are stable: nothing repeats on the
   * log). Default: half of `futureDays`.
   */
  minAheadDays?: number;
  retry?: Partial<RetryPolicy>;
  /** Subscription lifetime asked for, in minutes (Outlook resources: at most 4,230). */
  subscriptionMinutes?: number;
  now?: () => number;
}

const CURSOR_VERSION = 1;
const DAY_MS = 86_400_000;
/** Outlook's longest subscription less a margin for clock skew and the request's own time. */
const DEFAULT_SUBSCRIPTION_MINUTES = 4_230 - 15;
/**
 * How far a watermark stays behind the start of its round: Graph stamps lastModifiedDateTime
 * by its own clock, which may run ahead of ours, and an edit stamped just before the round
 * began may reach the delta a moment after the round read it.
 */
const CLOCK_SKEW_MS = 5 * 60_000;

/**
 * Asked on every request: ids that survive moves, times in UTC (Graph's `dateTime` carries no
 * offset, so the zone must be known), bodies as text (HTML is Outlook's rendering).
 */
const PREFER = ['IdType="ImmutableId"', 'outlook.timezone="UTC"', 'outlook.body-content-type="text"'];

interface CalendarCursor {
  /** The next page of the round in progress. */
  nextLink?: string;
  /** Caught up: the next round starts here. In an incremental round, the link it started from. */
  deltaLink?: string;
  /** The end of the view's range (ISO), fixed at the backfill's start. */
  windowEnd?: string;
  /**
   * When the round under way (initial or incremental) began, in ms; kept only between its
   * pages. A cursor stored without it finishes its round without a watermark.
   */
  startedAt?: number;
  seen: number;
}

function readCursor(cursor: Cursor): CalendarCursor | undefined {
  if (cursor.v !== CURSOR_VERSION) return undefined;
  const str = (k: string) => (typeof cursor[k] === 'string' ? (cursor[k] as string) : undefined);
  return {
    ...(str('nextLink') ? { nextLink: str('nextLink') } : {}),
    ...(str('deltaLink') ? { deltaLink: str('deltaLink') } : {}),
    ...(str('windowEnd') ? { windowEnd: str('windowEnd') } : {}),
    ...(typeof cursor.startedAt === 'number' && Number.isFinite(cursor.startedAt)
      ? { startedAt: cursor.startedAt }
      : {}),
    seen: typeof cursor.seen === 'number' ? cursor.seen : 0,
  };
}

const writeCursor = (c: CalendarCursor): Cursor => ({
  v: CURSOR_VERSION,
  nextLink: c.nextLink ?? null,
  deltaLink: c.deltaLink ?? null,
  windowEnd: c.windowEnd ?? null,
  startedAt: c.startedAt ?? null,
  seen: c.seen,
});

/**
 * What the page that finishes a round guarantees: every change before the round began (less
 * the skew) is delivered. Nothing when the round's start is not known.
 */
const watermarkOf = (startedAt: number | undefined): { watermark?: Date } =>
  startedAt === undefined ? {} : { watermark: new Date(startedAt - CLOCK_SKEW_MS) };

interface DeltaPage {
  value?: GraphEvent[];
  '@odata.nextLink'?: string;
  '@odata.deltaLink'?: string;
}

interface GraphSubscription {
  id?: string;
  expirationDateTime?: string;
}

const startOfDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

export function createMicrosoftCalendarConnector(options: MicrosoftCalendarOptions = {}): Connector {
  const pageSize = options.pageSize ?? 100;
  const pastDays = options.pastDays ?? 365;
  const futureDays = options.futureDays ?? 730;
  const minAheadDays = options.minAheadDays ?? futureDays / 2;
  const subscriptionMinutes = options.subscriptionMinutes ?? DEFAULT_SUBSCRIPTION_MINUTES;
  const now = options.now ?? Date.now;
  const call = <T>(ctx: ConnectionContext, fn: (client: Client) => Promise<T>) =>
    graphCall<T>(ctx, fn, options.retry ? { retry: options.retry } : {});
  const prefer = { Prefer: PREFER.join(', ') };
  const scopeOf = (ctx: ConnectionContext) => ({
    workspaceId: ctx.workspaceId,
    connectionId: ctx.connectionId,
  });

  /** A link from a stored cursor is followed only on the Graph origin the connection uses. */
  const onGraph = (ctx: ConnectionContext, link: string): boolean => {
    try {
      return new URL(link).origin === new URL(ctx.endpoints.microsoftGraphUrl).origin;
    } catch {
      return false;
    }
  };

  const getEvent = (ctx: ConnectionContext, id: string) =>
    call<GraphEvent>(ctx, (client) =>
      client
        .api(`/me/events/${encodeURIComponent(id)}`)
        .headers(prefer)
        .get(),
    );

  /** One calendarView delta page, of the initial round (backfill) or an incremental one, as a PullPage. */
  async function deltaPage(
    ctx: ConnectionContext,
    state: CalendarCursor,
    incremental: boolean,
  ): Promise<ConnectorResult<PullPage>> {
    let windowEnd = state.windowEnd;
    const link = state.nextLink ?? (incremental ? state.deltaLink : undefined);
    let request: (client: Client) => Promise<DeltaPage>;
    const headers = { Prefer: [`odata.maxpagesize=${pageSize}`, ...PREFER].join(', ') };
    if (link) {
      request = (client) => client.api(link).headers(headers).get();
    } else {
      const today = startOfDay(now());
      const range = {
        startDateTime: new Date(today - pastDays * DAY_MS).toISOString(),
        endDateTime: new Date(today + (futureDays + 1) * DAY_MS).toISOString(),
      };
      windowEnd = range.endDateTime;
      request = (client) => client.api('/me/calendarView/delta').query(range).headers(headers).get();
    }
    const res = await call<DeltaPage>(ctx, request);
    if (!res.ok) return res;
    const receivedAt = new Date(now());
    const scope = scopeOf(ctx);
    // Only an incremental round reports removals; its tombstones are keyed by the round.
    const round = incremental && state.deltaLink ? roundOf(state.deltaLink) : undefined;
    const changes: SourceChangeInput[] = [];
    for (const event of res.value.value ?? []) {
      if (!event.id) continue;
      if (event['@removed']) {
        if (!round) continue;
        // Delta says "removed" both for a deleted event and for one that left the date range
        // (moved far ahead, or changed while outside it). Only a read tells them apart, and a
        // meeting that still exists must not be deleted in every other system: one GET each.
        const read = await getEvent(ctx, event.id);
        if (read.ok && !read.value.isCancelled) changes.push(toMeetingChange(read.value, scope, receivedAt));
        else if (read.ok || read.error.code === 'NotFound')
          changes.push(toRemovedChange(event.id, scope, receivedAt, round));
        else return read;
      } else if (incremental || !event.isCancelled) {
        // A cancelled meeting (left in an attendee's calendar) is a delete; the initial round lists live ones only.
        changes.push(toMeetingChange(event, scope, receivedAt));
      }
    }
    const seen = state.seen + changes.length;
    const progress = { seen };
    const nextLink = res.value['@odata.nextLink'];
    const deltaLink = res.value['@odata.deltaLink'];
    if (nextLink) {
      return ok({
        changes,
        cursor: writeCursor({
          nextLink,
          ...(incremental && state.deltaLink ? { deltaLink: state.deltaLink } : {}),
          ...(windowEnd ? { windowEnd } : {}),
          ...(state.startedAt !== undefined ? { startedAt: state.startedAt } : {}),
          seen,
        }),
        done: false,
        progress,
      });
    }
    if (!deltaLink)
      return err({ code: 'Transient', message: 'calendarView delta ended without a deltaLink' });
    return ok({
      changes,
      cursor: writeCursor({ deltaLink, ...(windowEnd ? { windowEnd } : {}), seen: incremental ? 0 : seen }),
      done: true,
      progress,
      ...watermarkOf(state.startedAt),
    });
  }

  /** An event as read now, as the change a pull of this version reports (same event key). */
  const currentChange = (ctx: ConnectionContext, event: GraphEvent): SourceChangeInput =>
    toMeetingChange(event, scopeOf(ctx), new Date(now()));

  async function pushOne(ctx: ConnectionContext, write: PushWrite): Promise<ConnectorResult<WriteReceipt>> {
    // The hash is over the fields as a later pull reports them: the response is rendered with
    // the same preferences as a delta page. Delta returns no extended properties (it refuses
    // $expand), so a pulled change carries no origin tag: this hash is what recognises our echo.
    const receipt = (event: GraphEvent): WriteReceipt => ({
      idempotencyKey: write.idempotencyKey,
      externalId: event.id ?? write.externalId ?? '',
      ...(event['@odata.etag'] ? { providerVersion: event['@odata.etag'] } : {}),
      contentHash: contentHash(event.isCancelled ? {} : { ...toMeetingFields(event) }),
    });
    if (write.entityType !== 'meeting') {
      return err({ code: 'Validation', message: `microsoft-calendar cannot write ${write.entityType}` });
    }
    if (write.op === 'merge') return err({ code: 'Validation', message: 'Outlook merges no events' });
    if (write.op === 'create') {
      // A retry with the same transactionId answers with the event the first attempt made.
      const body = {
        ...toGraphEvent(write.fields),
        transactionId: transactionIdFor(write.idempotencyKey),
        singleValueExtendedProperties: originTag(write.entityId),
      };
      const res = await call<GraphEvent>(ctx, (client) =>
        client.api('/me/events').headers(prefer).post(body),
      );
      return res.ok ? ok(receipt(res.value)) : res;
    }
    if (!write.externalId) return err({ code: 'Validation', message: `${write.op} without externalId` });
    const eventId = write.externalId;
    const path = `/me/events/${encodeURIComponent(eventId)}`;
    const headers = write.expectedVersion ? { ...prefer, 'If-Match': write.expectedVersion } : prefer;
    if (write.op === 'update') {
      const body = {
        ...toGraphEvent(write.fields),
        singleValueExtendedProperties: originTag(write.entityId),
      };
      const res = await call<GraphEvent>(ctx, (client) => client.api(path).headers(headers).patch(body));
      if (res.ok) return ok(receipt(res.value));
      if (res.error.code === 'NotFound') return err({ ...res.error, failedKeys: [write.idempotencyKey] });
      return await refused(res.error);
    }
    const res = await call<void>(ctx, (client) => client.api(path).headers(headers).delete());
    // Already gone (404, or 410 for a deleted item) is what a retried delete finds: done.
    if (res.ok || res.error.code === 'NotFound' || res.error.status === 410) {
      return ok({ idempotencyKey: write.idempotencyKey, externalId: eventId, contentHash: contentHash({}) });
    }
    return await refused(res.error);

    /**
     * A 412 (If-Match) names this write as the one at fault, and the event is read once for
     * `current`; a failed read only leaves `current` out.
     */
    async function refused(error: GraphCallError): Promise<ConnectorResult<WriteReceipt>> {
      if (error.code !== 'Conflict' || write.expectedVersion === undefined) return err(error);
      const now = await getEvent(ctx, eventId);
      return err({
        ...error,
        failedKeys: [write.idempotencyKey],
        ...(now.ok && now.value.id ? { current: [currentChange(ctx, now.value)] } : {}),
      });
    }
  }

  /**
   * If-Match makes each write atomic, but writes go one by one: a 412 on the third would leave
   * the first two applied. So a push of several writes with conditional ones reads those events
   * first and compares etags (see `checkVersions`); a cancelled event, or one read without an
   * id, counts as gone. A push of one write needs no read: its If-Match is the check.
   */
  const versionCheck: VersionCheck<string, GraphEvent> = {
    provider: 'microsoft-calendar',
    noun: 'event',
    ifMatch: true,
    namesIds: false,
    target: (externalId) => externalId,
    read: getEvent,
    isGone: (event) => !event.id || !!event.isCancelled,
    versionOf: (event) => event['@odata.etag'],
    toChange: currentChange,
  };

  return {
    provider: 'microsoft-calendar',
    entities: ['meeting'],
    writable: ['meeting'],
    // Graph sets no status (a cancelled meeting is a delete), organizer or iCalUId.
    readOnlyFields: { meeting: ['organizer', 'iCalUID', 'status'] },
    identifyAccount: identifyMicrosoftAccount,

    async backfill(ctx, cursor) {
      const state = readCursor(cursor);
      // Start (or restart) unless we are in the middle of the initial round.
      const resume = state?.nextLink && !state.deltaLink && onGraph(ctx, state.nextLink);
      return deltaPage(ctx, resume ? state : { seen: 0, startedAt: now() }, false);
    },

    async pull(ctx, cursor) {
      const state = readCursor(cursor);
      if (!state?.deltaLink) return err({ code: 'CursorInvalid', message: 'no delta link: backfill first' });
      if ([state.deltaLink, state.nextLink].some((l) => l !== undefined && !onGraph(ctx, l)))
        return err({
          code: 'CursorInvalid',
          message: 'delta link is not on the Graph origin of this connection',
        });
      const windowEnd = state.windowEnd ? Date.parse(state.windowEnd) : Number.NaN;
      if (!state.nextLink && !(windowEnd - now() >= minAheadDays * DAY_MS))
        return err({
          code: 'CursorInvalid',
          message: `the calendar view reaches less than ${minAheadDays} days ahead: backfill for a new range`,
        });
      // A round begins at the stored deltaLink (no nextLink) and reads every change Graph holds
      // at that moment, so its start is taken before the first request.
      return deltaPage(ctx, state.nextLink ? state : { ...state, startedAt: now() }, true);
    },

    // Graph signs nothing: the clientState each subscription was made with is the proof.
    verifyWebhook: verifyGraphNotification,
    // Notifications are hints only: every kind ends in a pull, which reads what changed.
    parseWebhook: (request) => parseGraphNotification(request, 'calendar'),

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
      const expiresAt = new Date(now() + subscriptionMinutes * 60_000);
      const body = {
        changeType: 'created,updated,deleted',
        notificationUrl: callbackUrl,
        lifecycleNotificationUrl: callbackUrl,
        resource: '/me/events',
        expirationDateTime: expiresAt.toISOString(),
        clientState: token,
      };
      const res = await call<GraphSubscription>(ctx, (client) =>
        client.api('/subscriptions').headers(prefer).post(body),
      );
      if (!res.ok) return res;
      if (!res.value.id)
        return err({ code: 'Transient', message: 'Graph created a subscription without an id' });
      const granted = res.value.expirationDateTime ? new Date(res.value.expirationDateTime) : expiresAt;
      return ok({ id: res.value.id, expiresAt: Number.isNaN(granted.getTime()) ? expiresAt : granted });
    },

    async unsubscribe(ctx, subscription) {
      const res = await call<void>(ctx, (client) =>
        client
          .api(`/subscriptions/${encodeURIComponent(subscription.id)}`)
          .headers(prefer)
          .delete(),
      );
      return res.ok || res.error.code === 'NotFound' ? ok(undefined) : res;
    },
  };
}

export const microsoftCalendarConnector: Connector = createMicrosoftCalendarConnector();
