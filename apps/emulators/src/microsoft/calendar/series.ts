import type { EventFields, ZonedTime } from './calendar-event';
import type { EventView, StoredEvent, Timing } from './event-view';
import { dayNumber, isOccurrenceDate, occurrenceDates } from './recurrence';
import { instantToWall, requireZone, wallToInstant } from './time-zones';

const DAY_MS = 86_400_000;

/** A calendar view's window: events that overlap [from, to). */
export interface ViewRange {
  from: number;
  to: number;
}

export const overlaps = (f: Pick<EventFields, 'start' | 'end'>, range: ViewRange): boolean =>
  f.start.at < range.to && (f.end.at > range.from || (f.end.at === f.start.at && f.start.at >= range.from));

/**
 * Where a series puts its occurrence of `date`: the series' start time of day on that date
 * in the series' zone (so 09:00 stays 09:00 across daylight saving), lasting as long.
 */
export function occurrenceTiming(timing: Timing, date: string): { start: ZonedTime; end: ZonedTime } {
  const startWall = dayNumber(date) * DAY_MS + (((timing.start.wall % DAY_MS) + DAY_MS) % DAY_MS);
  if (timing.isAllDay) {
    const length = timing.end.wall - timing.start.wall;
    return {
      start: { ...timing.start, wall: startWall, at: startWall },
      end: { ...timing.end, wall: startWall + length, at: startWall + length },
    };
  }
  const at = wallToInstant(startWall, requireZone(timing.start.timeZone));
  const endAt = at + (timing.end.at - timing.start.at);
  return {
    start: { ...timing.start, wall: startWall, at },
    end: { ...timing.end, wall: instantToWall(endAt, requireZone(timing.end.timeZone)), at: endAt },
  };
}

/**
 * The occurrences of a series (under its current timing, or a former one) that overlap the
 * range: cancelled ones left out, exceptions as edited (current timing only: a new timing
 * drops them, as Outlook does).
 */
export function occurrencesIn(
  event: StoredEvent,
  range: ViewRange,
  timing: Timing = event.fields,
): EventView[] {
  if (!timing.recurrence) return [];
  const current = timing === event.fields;
  const out: EventView[] = [];
  for (const date of occurrenceDates(timing.recurrence)) {
    const { start, end } = occurrenceTiming(timing, date);
    // Exceptions may have moved; one can sit a day either side of its series slot.
    if (start.at >= range.to + DAY_MS) break;
    if (event.cancelled.has(date)) continue;
    const view = occurrenceView(event, date, start, end, current);
    if (overlaps(view.occurrence!.fields, range)) out.push(view);
  }
  return out;
}

/** The occurrence of `date`, if the series has one there (GET by an occurrence's id). */
export function occurrenceOn(event: StoredEvent, date: string): EventView | undefined {
  const r = event.fields.recurrence;
  if (!r || event.cancelled.has(date) || !isOccurrenceDate(r, date)) return undefined;
  const { start, end } = occurrenceTiming(event.fields, date);
  return occurrenceView(event, date, start, end, true);
}

function occurrenceView(
  event: StoredEvent,
  date: string,
  start: ZonedTime,
  end: ZonedTime,
  current: boolean,
): EventView {
  const exception = current ? event.exceptions.get(date) : undefined;
  return {
    event,
    occurrence: exception
      ? {
          date,
          fields: exception.fields,
          version: exception.version,
          exception: true,
          originalStart: start.at,
        }
      : {
          date,
          fields: { ...event.fields, start, end, recurrence: null },
          version: event.version,
          exception: false,
          originalStart: start.at,
        },
  };
}
