import { graphErrors } from '../graph-errors';
import { type EventFields, type Json, NO_TIME, type ZonedTime } from './calendar-event';
import { type BodyType, bodyPreview, renderBody } from './event-body';
import { etagOf, occurrenceICalUId, occurrenceId } from './event-ids';
import { type ExtendedProperties, expandedProperties } from './extended-properties';
import { renderRecurrence } from './recurrence';
import { formatInstant, formatWall, instantToWall } from './time-zones';

export interface EventVersion {
  changeKey: string;
  modified: number;
}

/** One event of the mailbox: a single instance or a series master. */
export interface StoredEvent {
  id: string;
  iCalUId: string;
  created: number;
  version: EventVersion;
  /** The client's idempotency key, when it gave one. */
  transactionId?: string;
  /** An invitation from someone else (control API): its organizer; the owner is then an attendee. */
  invitedBy?: { name: string; address: string };
  fields: EventFields;
  extended: ExtendedProperties;
  /** Set once the event is made an online meeting: Graph never takes it back, nor changes its provider. */
  online?: { joinUrl: string; provider: EventFields['onlineMeetingProvider'] };
  /** Series: cancelled occurrences by original date, with the journal position of the cancellation. */
  cancelled: Map<string, number>;
  /** Series: occurrences edited apart from the series, by original date. */
  exceptions: Map<string, { fields: EventFields; version: EventVersion }>;
  /** Series: the timing a PATCH replaced, and the journal position from which it is gone. */
  former: { timing: Timing; until: number }[];
}

export type Timing = Pick<EventFields, 'start' | 'end' | 'isAllDay' | 'recurrence'>;

/** An event as a view shows it: the event itself, or one occurrence of a series. */
export interface EventView {
  event: StoredEvent;
  occurrence?: {
    date: string;
    fields: EventFields;
    version: EventVersion;
    exception: boolean;
    /** Where the series put it, before any exception moved it. */
    originalStart: number;
  };
}

export const viewId = (v: EventView): string =>
  v.occurrence ? occurrenceId(v.event.id, v.occurrence.date) : v.event.id;

export const viewFields = (v: EventView): EventFields => v.occurrence?.fields ?? v.event.fields;

export const viewVersion = (v: EventView): EventVersion => v.occurrence?.version ?? v.event.version;

export interface RenderOptions {
  owner: { displayName: string; mail: string };
  /** The output zone (`Prefer: outlook.timezone`): the name as asked, and its IANA zone. */
  zone: { name: string; iana: string };
  bodyType: BodyType;
  /** Extended property ids asked for with $expand. */
  expand?: string[];
}

/** The event as Graph returns it, every property present, in Graph's order. */
export function renderEvent(view: EventView, opts: RenderOptions): Json {
  const { event, occurrence } = view;
  const f = viewFields(view);
  const id = viewId(view);
  const version = viewVersion(view);
  const type = occurrence
    ? occurrence.exception
      ? 'exception'
      : 'occurrence'
    : f.recurrence
      ? 'seriesMaster'
      : 'singleInstance';
  const { online } = event;
  const out: Json = {
    '@odata.etag': etagOf(version.changeKey),
    id,
    createdDateTime: formatInstant(event.created),
    lastModifiedDateTime: formatInstant(version.modified),
    changeKey: version.changeKey,
    categories: f.categories,
    ...(event.transactionId === undefined ? {} : { transactionId: event.transactionId }),
    originalStartTimeZone: f.start.timeZone,
    originalEndTimeZone: f.end.timeZone,
    iCalUId: occurrence ? occurrenceICalUId(event.iCalUId, occurrence.date) : event.iCalUId,
    reminderMinutesBeforeStart: f.reminderMinutesBeforeStart,
    isReminderOn: f.isReminderOn,
    hasAttachments: false,
    subject: f.subject,
    bodyPreview: bodyPreview(f.body),
    importance: f.importance,
    sensitivity: f.sensitivity,
    isAllDay: f.isAllDay,
    isCancelled: false,
    isOrganizer: event.invitedBy === undefined,
    responseRequested: f.responseRequested,
    seriesMasterId: occurrence ? event.id : null,
    showAs: f.showAs,
    type,
    webLink: `https://outlook.office365.com/owa/?itemid=${encodeURIComponent(id)}&exvsurl=1&path=/calendar/item`,
    onlineMeetingUrl: null,
    isOnlineMeeting: online !== undefined,
    onlineMeetingProvider: online?.provider ?? 'unknown',
    allowNewTimeProposals: f.allowNewTimeProposals,
    isDraft: false,
    hideAttendees: f.hideAttendees,
    responseStatus: event.invitedBy
      ? { response: 'accepted', time: NO_TIME }
      : { response: 'organizer', time: NO_TIME },
    body: renderBody(f.body, opts.bodyType),
    start: renderTime(f.start, f.isAllDay, opts.zone),
    end: renderTime(f.end, f.isAllDay, opts.zone),
    ...(occurrence
      ? { originalStart: new Date(occurrence.originalStart).toISOString().replace('.000Z', 'Z') }
      : {}),
    location: renderLocation(f.location, true),
    locations: f.locations.map((l) => renderLocation(l, false)),
    recurrence: !occurrence && f.recurrence ? renderRecurrence(f.recurrence) : null,
    attendees: f.attendees,
    organizer: {
      emailAddress: event.invitedBy ?? { name: opts.owner.displayName, address: opts.owner.mail },
    },
    onlineMeeting: online ? { joinUrl: online.joinUrl } : null,
  };
  const expanded = expandedProperties(event.extended, opts.expand);
  if (expanded) out.singleValueExtendedProperties = expanded;
  return out;
}

/**
 * `$select`: Graph keeps `@odata.etag` and `id` whatever is selected, and refuses a name the
 * type does not have.
 */
export function selectProperties(rendered: Json, select: string[] | undefined): Json {
  if (select === undefined) return rendered;
  const out: Json = { '@odata.etag': rendered['@odata.etag'], id: rendered.id };
  for (const name of select) {
    if (!EVENT_PROPERTIES.has(name))
      throw graphErrors.badRequest(
        `Could not find a property named '${name}' on type 'microsoft.graph.event'.`,
      );
    if (name in rendered) out[name] = rendered[name];
  }
  if ('singleValueExtendedProperties' in rendered)
    out.singleValueExtendedProperties = rendered.singleValueExtendedProperties;
  return out;
}

const EVENT_PROPERTIES = new Set([
  'id',
  'createdDateTime',
  'lastModifiedDateTime',
  'changeKey',
  'categories',
  'transactionId',
  'originalStartTimeZone',
  'originalEndTimeZone',
  'iCalUId',
  'reminderMinutesBeforeStart',
  'isReminderOn',
  'hasAttachments',
  'subject',
  'bodyPreview',
  'importance',
  'sensitivity',
  'isAllDay',
  'isCancelled',
  'isOrganizer',
  'responseRequested',
  'seriesMasterId',
  'showAs',
  'type',
  'webLink',
  'onlineMeetingUrl',
  'isOnlineMeeting',
  'onlineMeetingProvider',
  'allowNewTimeProposals',
  'isDraft',
  'hideAttendees',
  'responseStatus',
  'body',
  'start',
  'end',
  'originalStart',
  'location',
  'locations',
  'recurrence',
  'attendees',
  'organizer',
  'onlineMeeting',
  'cancelledOccurrences',
]);

/** Timed events in the asked zone; all-day events keep their midnights, whatever the zone. */
function renderTime(t: ZonedTime, isAllDay: boolean, zone: RenderOptions['zone']): Json {
  const wall = isAllDay ? t.wall : instantToWall(t.at, zone.iana);
  return { dateTime: formatWall(wall), timeZone: zone.name };
}

/** Graph's location: an empty one when none was set, and the private uniqueId it derives from the name. */
function renderLocation(l: EventFields['location'], primary: boolean): Json {
  if (!l || l.displayName === '')
    return {
      displayName: '',
      locationType: 'default',
      uniqueIdType: 'unknown',
      address: {},
      coordinates: {},
    };
  return {
    displayName: l.displayName,
    ...(l.locationEmailAddress === undefined ? {} : { locationEmailAddress: l.locationEmailAddress }),
    ...(l.locationUri === undefined ? {} : { locationUri: l.locationUri }),
    locationType: 'default',
    ...(primary ? { uniqueId: l.displayName, uniqueIdType: 'private' } : { uniqueIdType: 'unknown' }),
    ...(l.address ? { address: l.address } : {}),
    ...(l.coordinates ? { coordinates: l.coordinates } : {}),
  };
}
