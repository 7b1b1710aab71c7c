import {
  type CalendarEvent,
  type CancelledEventStub,
  instantOf,
  type JsonObject,
  mergePatch,
  pickWritable,
  validateEventFields,
} from './calendar-event';
import { googleErrors } from './google-errors';
import { isoMs, isValidEventId, type SeededRandom } from './google-ids';

export interface EventListQuery {
  maxResults: number;
  showDeleted: boolean;
  updatedMin?: number;
  timeMin?: number;
  timeMax?: number;
  /** Repeated `privateExtendedProperty=k=v`: every pair must match. */
  privateProperties: [string, string][];
  sharedProperties: [string, string][];
  iCalUID?: string;
  q?: string;
  orderBy?: 'startTime' | 'updated';
}

export interface EventsPage {
  items: (CalendarEvent | CancelledEventStub)[];
  nextPageToken?: string;
  nextSyncToken?: string;
}

interface StoredEvent {
  event: CalendarEvent;
  /** Position in the calendar's change history; a sync token remembers the last one it saw. */
  changeSeq: number;
}

/** A listing in progress: the ids it walks were fixed at its first page. */
interface Listing {
  query: EventListQuery;
  ids: string[];
  cursor: number;
  /** The change sequence when the listing started; the final sync token resumes from there. */
  startSeq: number;
  /** Set for incremental listings: return only what changed after this sequence. */
  sinceSeq?: number;
  epoch: number;
}

export interface CalendarStoreDeps {
  rng: SeededRandom;
  now: () => number;
  /** Called after every change, so watch channels can be notified. */
  onChange: () => void;
}

/**
 * One user's primary calendar. Pages are windows of `maxResults` stored events (deleted
 * ones included) walked in a fixed order, and only the matching ones are returned: so
 * pages come out short or empty and still carry a nextPageToken, as Google's do.
 */
export class CalendarStore {
  readonly resourceId: string;
  private readonly events = new Map<string, StoredEvent>();
  private changeSeq = 0;
  /** Bumped to invalidate every sync token issued so far (the invalidate-cursors fault). */
  private epoch = 0;
  private readonly syncTokens = new Map<string, { seq: number; epoch: number }>();
  private readonly pageTokens = new Map<string, Listing>();

  constructor(
    readonly ownerEmail: string,
    private readonly deps: CalendarStoreDeps,
  ) {
    this.resourceId = deps.rng.base64url(27);
  }

  get(id: string): CalendarEvent {
    const stored = this.events.get(id);
    if (!stored) throw googleErrors.notFound();
    return stored.event;
  }

  insert(body: unknown): CalendarEvent {
    const raw = pickWritable(body);
    const requestedId = (body as JsonObject).id;
    let id: string;
    if (requestedId === undefined) {
      id = this.deps.rng.base32hex(26);
    } else {
      if (typeof requestedId !== 'string' || !isValidEventId(requestedId)) {
        throw googleErrors.invalid('Invalid resource id value.');
      }
      // Deleted events keep their id: re-inserting one is still a duplicate.
      if (this.events.has(requestedId)) throw googleErrors.duplicate();
      id = requestedId;
    }
    const fields = validateEventFields(raw, this.ownerEmail);
    const now = this.deps.now();
    const seq = ++this.changeSeq;
    const owner = { email: this.ownerEmail, self: true };
    const event: CalendarEvent = {
      kind: 'calendar#event',
      etag: etagFor(now, seq),
      id,
      htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(`${id} ${this.ownerEmail}`).toString('base64url')}`,
      created: isoMs(now),
      updated: isoMs(now),
      creator: owner,
      organizer: owner,
      iCalUID: `${id}@google.com`,
      sequence: 0,
      ...fields,
    };
    this.events.set(id, { event, changeSeq: seq });
    this.deps.onChange();
    return event;
  }

  patch(id: string, body: unknown, ifMatch?: string): CalendarEvent {
    const current = this.requireWritable(id, ifMatch);
    return this.write(current, mergePatch(writableOf(current), pickWritable(body)));
  }

  update(id: string, body: unknown, ifMatch?: string): CalendarEvent {
    const current = this.requireWritable(id, ifMatch);
    return this.write(current, pickWritable(body));
  }

  delete(id: string, ifMatch?: string): void {
    const current = this.requireWritable(id, ifMatch);
    if (current.status === 'cancelled') throw googleErrors.deleted();
    this.write(current, { ...writableOf(current), status: 'cancelled' });
  }

  /**
   * events.list. With a sync token, returns everything changed since it (deleted events as
   * cancelled stubs); an unknown or invalidated token is 410 fullSyncRequired.
   */
  list(query: EventListQuery, tokens: { syncToken?: string; pageToken?: string }): EventsPage {
    const listing = this.openListing(query, tokens);
    const window = listing.ids.slice(listing.cursor, listing.cursor + listing.query.maxResults);
    const items: (CalendarEvent | CancelledEventStub)[] = [];
    for (const id of window) {
      const stored = this.events.get(id);
      if (stored && this.matches(stored, listing)) items.push(presentInList(stored.event));
    }
    const cursor = listing.cursor + window.length;
    if (cursor < listing.ids.length) {
      const nextPageToken = this.deps.rng.base64url(48);
      this.pageTokens.set(nextPageToken, { ...listing, cursor });
      return { items, nextPageToken };
    }
    const nextSyncToken = `CP${this.deps.rng.base64url(30)}=`;
    this.syncTokens.set(nextSyncToken, { seq: listing.startSeq, epoch: this.epoch });
    return { items, nextSyncToken };
  }

  /** Whether a request resumes from a sync token (directly or through one of its pages). */
  isIncremental(tokens: { syncToken?: string; pageToken?: string }): boolean {
    if (tokens.pageToken !== undefined) return this.pageTokens.get(tokens.pageToken)?.sinceSeq !== undefined;
    return tokens.syncToken !== undefined;
  }

  /** Every sync token issued so far answers 410 from now on. */
  invalidateSyncTokens(): void {
    this.epoch++;
    this.syncTokens.clear();
  }

  /** Current state, cancelled events included (control API). */
  snapshot(): CalendarEvent[] {
    return [...this.events.values()].map((s) => s.event);
  }

  private openListing(query: EventListQuery, tokens: { syncToken?: string; pageToken?: string }): Listing {
    if (tokens.pageToken !== undefined) {
      const listing = this.pageTokens.get(tokens.pageToken);
      if (!listing) throw googleErrors.invalid('Invalid page token value.', 'pageToken');
      if (listing.sinceSeq !== undefined && listing.epoch !== this.epoch)
        throw googleErrors.fullSyncRequired();
      return listing;
    }
    if (tokens.syncToken !== undefined) {
      const token = this.syncTokens.get(tokens.syncToken);
      if (!token || token.epoch !== this.epoch) throw googleErrors.fullSyncRequired();
      return {
        query,
        ids: [...this.events.keys()],
        cursor: 0,
        startSeq: this.changeSeq,
        sinceSeq: token.seq,
        epoch: this.epoch,
      };
    }
    return { query, ids: this.orderedIds(query), cursor: 0, startSeq: this.changeSeq, epoch: this.epoch };
  }

  private orderedIds(query: EventListQuery): string[] {
    const stored = [...this.events.values()];
    if (query.orderBy === 'startTime') {
      stored.sort((a, b) => instantOf(a.event.start) - instantOf(b.event.start));
    } else if (query.orderBy === 'updated') {
      stored.sort((a, b) => a.changeSeq - b.changeSeq);
    }
    return stored.map((s) => s.event.id);
  }

  private matches(stored: StoredEvent, listing: Listing): boolean {
    const { event } = stored;
    if (listing.sinceSeq !== undefined) return stored.changeSeq > listing.sinceSeq;
    const q = listing.query;
    const updated = Date.parse(event.updated);
    if (q.updatedMin !== undefined && updated < q.updatedMin) return false;
    // With updatedMin, deletions since then are returned whatever showDeleted says.
    if (event.status === 'cancelled' && !q.showDeleted && q.updatedMin === undefined) return false;
    if (q.timeMin !== undefined && instantOf(event.end) <= q.timeMin) return false;
    if (q.timeMax !== undefined && instantOf(event.start) >= q.timeMax) return false;
    if (q.iCalUID !== undefined && event.iCalUID !== q.iCalUID) return false;
    if (!q.privateProperties.every(([k, v]) => event.extendedProperties?.private?.[k] === v)) return false;
    if (!q.sharedProperties.every(([k, v]) => event.extendedProperties?.shared?.[k] === v)) return false;
    if (q.q !== undefined) {
      const needle = q.q.toLowerCase();
      const haystack = [
        event.summary,
        event.description,
        event.location,
        ...(event.attendees ?? []).map((a) => a.email),
      ]
        .filter((s): s is string => s !== undefined)
        .join('\n')
        .toLowerCase();
      if (!haystack.includes(needle)) return false;
    }
    return true;
  }

  private requireWritable(id: string, ifMatch: string | undefined): CalendarEvent {
    const current = this.get(id);
    if (ifMatch !== undefined && ifMatch !== '*' && ifMatch !== current.etag)
      throw googleErrors.conditionNotMet();
    return current;
  }

  private write(current: CalendarEvent, raw: JsonObject): CalendarEvent {
    const fields = validateEventFields(raw, this.ownerEmail);
    const now = this.deps.now();
    const seq = ++this.changeSeq;
    // Attendees are re-invited when the time or place moves: that is what bumps the sequence.
    const rescheduled =
      JSON.stringify([current.start, current.end, current.location ?? null, current.recurrence ?? null]) !==
      JSON.stringify([fields.start, fields.end, fields.location ?? null, fields.recurrence ?? null]);
    const event: CalendarEvent = {
      kind: 'calendar#event',
      etag: etagFor(now, seq),
      id: current.id,
      htmlLink: current.htmlLink,
      created: current.created,
      updated: isoMs(now),
      creator: current.creator,
      organizer: current.organizer,
      iCalUID: current.iCalUID,
      sequence: current.sequence + (rescheduled ? 1 : 0),
      ...fields,
    };
    this.events.set(current.id, { event, changeSeq: seq });
    this.deps.onChange();
    return event;
  }
}

/** A quoted number, as Google's event etags are; unique per change. */
const etagFor = (now: number, seq: number): string => `"${BigInt(now) * 1000n + BigInt(seq % 1000)}"`;

function writableOf(event: CalendarEvent): JsonObject {
  return pickWritable(structuredClone(event));
}

function presentInList(event: CalendarEvent): CalendarEvent | CancelledEventStub {
  if (event.status !== 'cancelled') return event;
  return { kind: 'calendar#event', etag: event.etag, id: event.id, status: 'cancelled' };
}
