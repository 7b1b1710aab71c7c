import { graphErrors } from '../graph-errors';
import { ianaZone, timeZoneNotSupported } from './time-zones';

export const DAYS_OF_WEEK = [
  'sunday',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
] as const;
export type DayOfWeek = (typeof DAYS_OF_WEEK)[number];

/**
 * A series' patternedRecurrence. Only the daily and weekly patterns are emulated; the monthly
 * and yearly ones are refused with a 400 rather than expanded wrongly.
 */
export interface Recurrence {
  pattern: { type: 'daily' | 'weekly'; interval: number; daysOfWeek: DayOfWeek[]; firstDayOfWeek: DayOfWeek };
  range: {
    type: 'endDate' | 'numbered' | 'noEnd';
    startDate: string;
    endDate?: string;
    numberOfOccurrences?: number;
    recurrenceTimeZone: string;
  };
}

const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Past this many occurrences an unbounded series stops expanding (a view is at most a few years). */
export const MAX_OCCURRENCES = 5_000;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Days since 1970-01-01 of a YYYY-MM-DD date. */
export function dayNumber(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / DAY_MS;
}

export const dateOfDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

const weekday = (day: number): number => (((day + 4) % 7) + 7) % 7;

/** Reads a client's patternedRecurrence; enum values are matched without case, as Graph does. */
export function parseRecurrence(raw: unknown, seriesZone: string): Recurrence {
  if (!isObject(raw) || !isObject(raw.pattern) || !isObject(raw.range))
    throw graphErrors.badRequest('A recurrence needs both a pattern and a range.');
  const { pattern, range } = raw;
  const type = lower(pattern.type);
  if (type !== 'daily' && type !== 'weekly')
    throw graphErrors.badRequest(
      `The emulator supports the daily and weekly recurrence patterns only, not '${String(pattern.type)}'.`,
    );
  const interval = pattern.interval ?? 1;
  if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < 1 || interval > 99)
    throw graphErrors.badRequest('The recurrence interval must be a whole number from 1 to 99.');
  const firstDayOfWeek = pattern.firstDayOfWeek == null ? 'sunday' : day(pattern.firstDayOfWeek);
  let daysOfWeek: DayOfWeek[] = [];
  if (type === 'weekly') {
    if (!Array.isArray(pattern.daysOfWeek) || pattern.daysOfWeek.length === 0)
      throw graphErrors.badRequest('A weekly recurrence pattern needs daysOfWeek.');
    daysOfWeek = [...new Set(pattern.daysOfWeek.map(day))];
  }
  const rangeType = lower(range.type);
  if (rangeType !== 'enddate' && rangeType !== 'numbered' && rangeType !== 'noend')
    throw graphErrors.badRequest(`Invalid recurrence range type '${String(range.type)}'.`);
  if (typeof range.startDate !== 'string' || !isDate(range.startDate))
    throw graphErrors.badRequest('The recurrence range needs a startDate (YYYY-MM-DD).');
  const recurrenceTimeZone =
    typeof range.recurrenceTimeZone === 'string' ? range.recurrenceTimeZone : seriesZone;
  if (!ianaZone(recurrenceTimeZone)) throw timeZoneNotSupported(recurrenceTimeZone);
  const out: Recurrence = {
    pattern: { type, interval, daysOfWeek, firstDayOfWeek },
    range: { type: 'noEnd', startDate: range.startDate, recurrenceTimeZone },
  };
  if (rangeType === 'enddate') {
    if (typeof range.endDate !== 'string' || !isDate(range.endDate) || range.endDate < range.startDate)
      throw graphErrors.badRequest('An endDate recurrence range needs an endDate on or after its startDate.');
    out.range = { ...out.range, type: 'endDate', endDate: range.endDate };
  } else if (rangeType === 'numbered') {
    const n = range.numberOfOccurrences;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 999)
      throw graphErrors.badRequest('A numbered recurrence range needs numberOfOccurrences from 1 to 999.');
    out.range = { ...out.range, type: 'numbered', numberOfOccurrences: n };
  }
  return out;
}

/** The recurrence as Graph returns it: every field present, unused ones zero or first. */
export function renderRecurrence(r: Recurrence): Json {
  return {
    pattern: {
      type: r.pattern.type,
      interval: r.pattern.interval,
      month: 0,
      dayOfMonth: 0,
      daysOfWeek: r.pattern.daysOfWeek,
      firstDayOfWeek: r.pattern.firstDayOfWeek,
      index: 'first',
    },
    range: {
      type: r.range.type,
      startDate: r.range.startDate,
      endDate: r.range.endDate ?? '0001-01-01',
      recurrenceTimeZone: r.range.recurrenceTimeZone,
      numberOfOccurrences: r.range.numberOfOccurrences ?? 0,
    },
  };
}

/**
 * The series' occurrence dates (YYYY-MM-DD) in order, from the range's start. A noEnd series
 * is endless: callers stop when the dates pass what they need.
 */
export function* occurrenceDates(r: Recurrence): Generator<string> {
  const first = dayNumber(r.range.startDate);
  const last = r.range.endDate === undefined ? Number.POSITIVE_INFINITY : dayNumber(r.range.endDate);
  const max = Math.min(r.range.numberOfOccurrences ?? MAX_OCCURRENCES, MAX_OCCURRENCES);
  let count = 0;
  if (r.pattern.type === 'daily') {
    for (let d = first; d <= last && count < max; d += r.pattern.interval, count++) yield dateOfDay(d);
    return;
  }
  const firstDay = DAYS_OF_WEEK.indexOf(r.pattern.firstDayOfWeek);
  const offsets = r.pattern.daysOfWeek
    .map((d) => (DAYS_OF_WEEK.indexOf(d) - firstDay + 7) % 7)
    .sort((a, b) => a - b);
  // Weeks are counted from the one holding the start date, each beginning on firstDayOfWeek.
  for (let week = first - ((weekday(first) - firstDay + 7) % 7); ; week += 7 * r.pattern.interval) {
    for (const offset of offsets) {
      const d = week + offset;
      if (d < first) continue;
      if (d > last || count >= max) return;
      yield dateOfDay(d);
      count++;
    }
  }
}

/** Whether a date is one of the series' occurrences. */
export function isOccurrenceDate(r: Recurrence, date: string): boolean {
  for (const d of occurrenceDates(r)) {
    if (d === date) return true;
    if (d > date) return false;
  }
  return false;
}

function day(value: unknown): DayOfWeek {
  const name = lower(value);
  const found = DAYS_OF_WEEK.find((d) => d === name);
  if (!found) throw graphErrors.badRequest(`Invalid day of the week '${String(value)}'.`);
  return found;
}

const lower = (v: unknown): string => (typeof v === 'string' ? v.toLowerCase() : '');
const isDate = (s: string): boolean => DATE.test(s) && dateOfDay(dayNumber(s)) === s;
