import { GraphError } from '../graph-errors';

/**
 * Graph takes Windows time zone names ("Pacific Standard Time") and IANA names
 * ("America/Los_Angeles") alike; Intl knows only IANA ones. The common Windows names, as
 * CLDR's windowsZones maps them (territory 001). Names outside the table are refused the way
 * Graph refuses a zone it does not know, so a test never runs on a guessed offset.
 */
const WINDOWS_ZONES: Record<string, string> = {
  UTC: 'UTC',
  'Dateline Standard Time': 'Etc/GMT+12',
  'UTC-11': 'Etc/GMT+11',
  'Hawaiian Standard Time': 'Pacific/Honolulu',
  'Alaskan Standard Time': 'America/Anchorage',
  'Pacific Standard Time': 'America/Los_Angeles',
  'US Mountain Standard Time': 'America/Phoenix',
  'Mountain Standard Time': 'America/Denver',
  'Central America Standard Time': 'America/Guatemala',
  'Central Standard Time': 'America/Chicago',
  'Central Standard Time (Mexico)': 'America/Mexico_City',
  'Canada Central Standard Time': 'America/Regina',
  'SA Pacific Standard Time': 'America/Bogota',
  'Eastern Standard Time': 'America/New_York',
  'US Eastern Standard Time': 'America/Indianapolis',
  'Atlantic Standard Time': 'America/Halifax',
  'SA Western Standard Time': 'America/La_Paz',
  'Pacific SA Standard Time': 'America/Santiago',
  'Newfoundland Standard Time': 'America/St_Johns',
  'E. South America Standard Time': 'America/Sao_Paulo',
  'Argentina Standard Time': 'America/Buenos_Aires',
  'UTC-02': 'Etc/GMT+2',
  'Azores Standard Time': 'Atlantic/Azores',
  'Cape Verde Standard Time': 'Atlantic/Cape_Verde',
  'GMT Standard Time': 'Europe/London',
  'Greenwich Standard Time': 'Atlantic/Reykjavik',
  'Morocco Standard Time': 'Africa/Casablanca',
  'W. Europe Standard Time': 'Europe/Berlin',
  'Central Europe Standard Time': 'Europe/Budapest',
  'Romance Standard Time': 'Europe/Paris',
  'Central European Standard Time': 'Europe/Warsaw',
  'W. Central Africa Standard Time': 'Africa/Lagos',
  'GTB Standard Time': 'Europe/Bucharest',
  'E. Europe Standard Time': 'Europe/Chisinau',
  'FLE Standard Time': 'Europe/Kiev',
  'Egypt Standard Time': 'Africa/Cairo',
  'South Africa Standard Time': 'Africa/Johannesburg',
  'Israel Standard Time': 'Asia/Jerusalem',
  'Turkey Standard Time': 'Europe/Istanbul',
  'Arabic Standard Time': 'Asia/Baghdad',
  'Arab Standard Time': 'Asia/Riyadh',
  'Russian Standard Time': 'Europe/Moscow',
  'E. Africa Standard Time': 'Africa/Nairobi',
  'Iran Standard Time': 'Asia/Tehran',
  'Arabian Standard Time': 'Asia/Dubai',
  'Afghanistan Standard Time': 'Asia/Kabul',
  'Pakistan Standard Time': 'Asia/Karachi',
  'India Standard Time': 'Asia/Calcutta',
  'Sri Lanka Standard Time': 'Asia/Colombo',
  'Nepal Standard Time': 'Asia/Katmandu',
  'Bangladesh Standard Time': 'Asia/Dhaka',
  'Myanmar Standard Time': 'Asia/Rangoon',
  'SE Asia Standard Time': 'Asia/Bangkok',
  'China Standard Time': 'Asia/Shanghai',
  'Singapore Standard Time': 'Asia/Singapore',
  'Taipei Standard Time': 'Asia/Taipei',
  'W. Australia Standard Time': 'Australia/Perth',
  'Tokyo Standard Time': 'Asia/Tokyo',
  'Korea Standard Time': 'Asia/Seoul',
  'Cen. Australia Standard Time': 'Australia/Adelaide',
  'AUS Central Standard Time': 'Australia/Darwin',
  'E. Australia Standard Time': 'Australia/Brisbane',
  'AUS Eastern Standard Time': 'Australia/Sydney',
  'West Pacific Standard Time': 'Pacific/Port_Moresby',
  'New Zealand Standard Time': 'Pacific/Auckland',
  'Fiji Standard Time': 'Pacific/Fiji',
  'Tonga Standard Time': 'Pacific/Tongatapu',
};

const windowsByLowerName = new Map(
  Object.entries(WINDOWS_ZONES).map(([name, iana]) => [name.toLowerCase(), iana]),
);

/** The IANA zone a Graph time zone name stands for, or undefined when it is not one. */
export function ianaZone(name: string): string | undefined {
  const windows = windowsByLowerName.get(name.trim().toLowerCase());
  if (windows) return windows;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** Graph's answer to a zone it does not know. */
export const timeZoneNotSupported = (name: string): GraphError =>
  new GraphError(
    400,
    'TimeZoneNotSupportedException',
    `A valid TimeZone value must be specified. The following TimeZone value is not supported: '${name}'.`,
  );

export function requireZone(name: string): string {
  const zone = ianaZone(name);
  if (!zone) throw timeZoneNotSupported(name);
  return zone;
}

/** A wall-clock time as Graph writes it: `2024-05-01T09:00:00.0000000`, no offset. */
export type WallTime = string;

const WALL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?$/;

/** Milliseconds of a wall-clock time read as if it were UTC (the arithmetic on wall times). */
export function wallMs(wall: string): number | undefined {
  const m = WALL.exec(wall);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
  if (Number.isNaN(ms)) return undefined;
  const check = new Date(ms);
  // Date.UTC rolls 2024-02-31 over into March; Graph refuses such a date.
  if (check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1) return undefined;
  return ms + Math.floor(Number(`0.${frac ?? '0'}`) * 1000);
}

/** Graph's rendering of wall-clock milliseconds: seven fractional digits, no offset. */
export function formatWall(ms: number): WallTime {
  return `${new Date(ms).toISOString().slice(0, 23)}0000`;
}

/** An instant as Graph writes timestamps: UTC with seven fractional digits. */
export function formatInstant(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}0000Z`;
}

/** The zone's offset from UTC at an instant, in ms (positive east of Greenwich). */
function offsetAt(instant: number, zone: string): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 0;
  const parts = formatterOf(zone).formatToParts(new Date(instant));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** One formatter per zone: making one costs far more than using it. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The instant a wall-clock time in a zone stands for (a time skipped by DST moves forward). */
export function wallToInstant(wall: number, zone: string): number {
  const guess = wall - offsetAt(wall, zone);
  return wall - offsetAt(guess, zone);
}

/** The wall-clock time in a zone at an instant. */
export function instantToWall(instant: number, zone: string): number {
  return instant + offsetAt(instant, zone);
}
