import { randomBytes } from 'node:crypto';
import { type DeltaEntry, DeltaJournal, type DeltaToken, type Expand, type Expiry } from '../delta';
import { graphErrors } from '../graph-errors';
import { type ChangeType, ignoreChanges, type OnMailboxChange } from '../subscriptions/mailbox-change';
import { applyEventWrite, type EventFields, isObject, type Json } from './calendar-event';
import { etagOf, newChangeKey, newEventId, occurrenceId, parseEventId } from './event-ids';
import {
  type EventVersion,
  type EventView,
  type StoredEvent,
  type Timing,
  viewId,
  viewVersion,
} from './event-view';
import { writeExtendedProperties } from './extended-properties';
import { exchangeGlobalObjectId, invitationGlobalObjectId } from './global-object-id';
import { occurrenceOn, occurrencesIn, overlaps, type ViewRange } from './series';

export interface DeltaRequest {
  pageSize: number;
  range: ViewRange;
  /** The initial call's range parameters, carried inside the tokens. */
  params: Record<string, string>;
  restartUrl: (params: Record<string, string> | undefined) => string;
}

/**
 * One mailbox's default calendar: single events and series masters, the change journal that
 * calendar-view delta rounds read, and the transaction ids that make retried creates
 * idempotent. Occurrences are not stored: a series expands into them when read.
 */
export class CalendarStore {
  private readonly journal = new DeltaJournal<StoredEvent>();
  /** Live events in creation order (the order `GET /me/events` pages through). */
  private readonly events = new Map<string, StoredEvent>();
  private readonly byTransactionId = new Map<string, string>();

  constructor(
    readonly now: () => number,
    private readonly onChange: OnMailboxChange = ignoreChanges,
  ) {}

  /**
   * POST /me/events. A create that repeats a live event's transactionId returns that event
   * instead of a second one (`created: false`). `invitedAs`: the event came as an invitation
   * from another system with this UID, which its iCalUId then carries (control API only: Graph
   * ignores an `iCalUId` in the body).
   */
  create(
    body: unknown,
    invitedAs?: string,
    invitedBy?: { name: string; address: string },
  ): { view: EventView; created: boolean } {
    if (!isObject(body)) throw graphErrors.badRequest('The request body must be a JSON object.');
    const transactionId = typeof body.transactionId === 'string' ? body.transactionId : undefined;
    const existing = transactionId === undefined ? undefined : this.byTransactionId.get(transactionId);
    const retried = existing === undefined ? undefined : this.events.get(existing);
    if (retried) return { view: { event: retried }, created: false };
    const event = this.insert(body, transactionId, invitedAs, invitedBy);
    this.changed('created', event);
    return { view: { event }, created: true };
  }

  /**
   * Events made at once as if they had been in the calendar all along (control API's seed):
   * each body as a create's, without transaction ids and without change notifications.
   */
  seed(bodies: readonly Json[]): number {
    for (const body of bodies) this.insert(body);
    return bodies.length;
  }

  private insert(
    body: Json,
    transactionId?: string,
    invitedAs?: string,
    invitedBy?: { name: string; address: string },
  ): StoredEvent {
    const fields = applyEventWrite(undefined, body);
    const now = this.now();
    const event: StoredEvent = {
      id: newEventId(),
      iCalUId: invitedAs === undefined ? exchangeGlobalObjectId(now) : invitationGlobalObjectId(invitedAs),
      created: now,
      version: { changeKey: newChangeKey(), modified: now },
      ...(transactionId === undefined ? {} : { transactionId }),
      ...(invitedBy === undefined ? {} : { invitedBy }),
      fields,
      extended: new Map(),
      cancelled: new Map(),
      exceptions: new Map(),
      former: [],
    };
    writeExtendedProperties(event.extended, body.singleValueExtendedProperties);
    makeOnlineMeeting(event, fields);
    this.events.set(event.id, event);
    if (transactionId !== undefined) this.byTransactionId.set(transactionId, event.id);
    this.journal.put(event.id, event);
    return event;
  }

  /** An event, or an occurrence of a series by its own id. */
  get(id: string): EventView {
    const { masterId, date } = parseEventId(id);
    const event = this.events.get(masterId);
    if (!event) throw graphErrors.notFound();
    if (date === undefined) return { event };
    const occurrence = occurrenceOn(event, date);
    if (!occurrence) throw graphErrors.notFound();
    return occurrence;
  }

  /** PATCH: the properties given replace the event's; an occurrence's edit makes it an exception. */
  update(id: string, body: unknown, ifMatch?: string): EventView {
    const view = this.requireVersion(id, ifMatch);
    const { event, occurrence } = view;
    if (isObject(body) && body.transactionId !== undefined && body.transactionId !== event.transactionId)
      throw graphErrors.badRequest('The transactionId of an event cannot be changed.');
    const version = this.nextVersion();
    if (occurrence) {
      if (isObject(body) && body.recurrence != null)
        throw graphErrors.badRequest('An occurrence of a series cannot have a recurrence of its own.');
      const fields = applyEventWrite(occurrence.fields, body);
      event.exceptions.set(occurrence.date, { fields: { ...fields, recurrence: null }, version });
      this.journal.put(event.id, event);
      this.changed('updated', event, version.changeKey);
      return occurrenceOn(event, occurrence.date)!;
    }
    const fields = applyEventWrite(event.fields, body);
    const extended = new Map(event.extended);
    if (isObject(body)) writeExtendedProperties(extended, body.singleValueExtendedProperties);
    if (timingChanged(event.fields, fields) && (event.fields.recurrence || fields.recurrence)) {
      // A new timing makes new occurrences: the old ones (and their exceptions) are gone.
      event.former.push({ timing: timingOf(event.fields), until: this.journal.position + 1 });
      event.exceptions.clear();
      event.cancelled.clear();
    }
    event.fields = fields;
    event.extended = extended;
    event.version = version;
    makeOnlineMeeting(event, fields);
    this.journal.put(event.id, event);
    this.changed('updated', event);
    return { event };
  }

  /** DELETE: an event goes (a series with all its occurrences); an occurrence is cancelled. */
  delete(id: string, ifMatch?: string): void {
    const { event, occurrence } = this.requireVersion(id, ifMatch);
    if (occurrence) {
      event.cancelled.set(occurrence.date, this.journal.position + 1);
      event.exceptions.delete(occurrence.date);
      event.version = this.nextVersion();
      this.journal.put(event.id, event);
      this.changed('updated', event);
      return;
    }
    this.events.delete(event.id);
    if (event.transactionId !== undefined) this.byTransactionId.delete(event.transactionId);
    this.journal.remove(event.id);
    this.changed('deleted', event);
  }

  /** GET /me/events: single events and series masters (not occurrences), in creation order. */
  list(top: number, skip: number): { views: EventView[]; more: boolean } {
    const all = [...this.events.values()];
    return { views: all.slice(skip, skip + top).map((event) => ({ event })), more: skip + top < all.length };
  }

  /**
   * One page of a calendar-view delta round: single events in the range and the occurrences
   * of series in it, never series masters. After the initial round, what left the range or
   * was deleted comes as removed, so do events changed outside the range (Graph does the same).
   */
  delta(
    token: DeltaToken | undefined,
    request: DeltaRequest,
  ): { entries: DeltaEntry<EventView>[]; next: DeltaToken } {
    return this.journal.page(token, {
      pageSize: request.pageSize,
      expand: expandInto(request.range),
      params: request.params,
      restartUrl: request.restartUrl,
    });
  }

  /** Every delta token issued so far is refused from now on, as Graph does once its sync state is evicted. */
  invalidateDelta(expiry?: Expiry): void {
    this.journal.invalidate(expiry);
  }

  /** The calendar as it stands, and the ids of deleted events (control API). */
  snapshot(): { views: EventView[]; deletedIds: string[] } {
    return {
      views: [...this.events.values()].map((event) => ({ event })),
      deletedIds: this.journal.removedIds(),
    };
  }

  private requireVersion(id: string, ifMatch: string | undefined): EventView {
    const view = this.get(id);
    if (ifMatch !== undefined && ifMatch.trim() !== '*') {
      const { changeKey } = viewVersion(view);
      const given = ifMatch.trim();
      if (given !== etagOf(changeKey) && given !== `"${changeKey}"` && given !== changeKey)
        throw graphErrors.preconditionFailed();
    }
    return view;
  }

  /** An occurrence's change is told as a change of its series (its master's id). */
  private changed(changeType: ChangeType, event: StoredEvent, changeKey = event.version.changeKey): void {
    this.onChange({ area: 'events', changeType, id: event.id, changeKey });
  }

  private nextVersion(): EventVersion {
    return { changeKey: newChangeKey(), modified: this.now() };
  }
}

/** How one changed event reads in a calendar view's delta page. */
function expandInto(range: ViewRange): Expand<StoredEvent, EventView> {
  const asItem = (view: EventView): DeltaEntry<EventView> => ({ kind: 'item', id: viewId(view), item: view });
  const asRemoved = (id: string): DeltaEntry<EventView> => ({ kind: 'removed', id, reason: 'deleted' });
  return ({ item, last, since, initial }) => {
    if (initial) return item ? inView(item, range).map(asItem) : [];
    const event = item ?? last;
    if (!event) return [];
    const shown = item ? inView(item, range) : [];
    const gone: string[] = [];
    if (!item) gone.push(...(event.fields.recurrence ? occurrencesIn(event, range).map(viewId) : [event.id]));
    // A single event that left the range, or changed outside it.
    else if (!event.fields.recurrence && shown.length === 0) gone.push(event.id);
    // Occurrences cancelled, and those of a timing a PATCH replaced, since the client's token.
    for (const [date, at] of event.cancelled) if (at > since) gone.push(occurrenceId(event.id, date));
    for (const { timing, until } of event.former)
      if (until > since)
        gone.push(...(timing.recurrence ? occurrencesIn(event, range, timing).map(viewId) : [event.id]));
    const shownIds = new Set(shown.map(viewId));
    const removed = [...new Set(gone)].filter((id) => !shownIds.has(id));
    return [...shown.map(asItem), ...removed.map(asRemoved)];
  };
}

/** What a calendar view shows of an event: a single one if it overlaps, a series' occurrences that do. */
function inView(event: StoredEvent, range: ViewRange): EventView[] {
  if (event.fields.recurrence) return occurrencesIn(event, range);
  return overlaps(event.fields, range) ? [{ event }] : [];
}

const timingOf = (f: EventFields): Timing => ({
  start: f.start,
  end: f.end,
  isAllDay: f.isAllDay,
  recurrence: f.recurrence,
});

const timingChanged = (a: EventFields, b: EventFields): boolean =>
  JSON.stringify(timingOf(a)) !== JSON.stringify(timingOf(b));

/**
 * Making an event an online meeting gives it a join URL for good: Outlook ignores later
 * changes to isOnlineMeeting and onlineMeetingProvider.
 */
function makeOnlineMeeting(event: StoredEvent, fields: EventFields): void {
  if (event.online !== undefined || !fields.isOnlineMeeting) return;
  const provider =
    fields.onlineMeetingProvider === 'unknown' ? 'teamsForBusiness' : fields.onlineMeetingProvider;
  const joinUrl = `https://teams.microsoft.com/l/meetup-join/19%3ameeting_${randomBytes(24).toString('base64url')}%40thread.v2/0`;
  event.online = { joinUrl, provider };
}
