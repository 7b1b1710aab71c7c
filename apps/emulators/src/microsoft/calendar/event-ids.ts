import { randomBytes } from 'node:crypto';
import { graphErrors } from '../graph-errors';

/**
 * Event ids look like Exchange's (`AAMkAD…`, URL-safe base64) and are immutable, as
 * `Prefer: IdType="ImmutableId"` makes them. An occurrence's id is its series master's bytes
 * followed by the occurrence's original date, so it can be read back without a lookup.
 */
const PREFIX = 'AAMkAD';
const MASTER_BYTES = 30;

export const newEventId = (): string => PREFIX + randomBytes(MASTER_BYTES).toString('base64url');

/** `date` is the occurrence's original date (YYYY-MM-DD) in the series' time zone. */
export function occurrenceId(masterId: string, date: string): string {
  const master = Buffer.from(masterId.slice(PREFIX.length), 'base64url');
  return PREFIX + Buffer.concat([master, dateBytes(date)]).toString('base64url');
}

/** What an id names: an event (single or series master), or one occurrence of a series. */
export type ParsedEventId = { masterId: string; date?: string };

export function parseEventId(id: string): ParsedEventId {
  const bytes = id.startsWith(PREFIX) ? Buffer.from(id.slice(PREFIX.length), 'base64url') : Buffer.alloc(0);
  if (bytes.length === MASTER_BYTES) return { masterId: id };
  if (bytes.length === MASTER_BYTES + 4) {
    const masterId = PREFIX + bytes.subarray(0, MASTER_BYTES).toString('base64url');
    const year = bytes.readUInt16BE(MASTER_BYTES);
    const date = `${year}-${pad(bytes[MASTER_BYTES + 2]!)}-${pad(bytes[MASTER_BYTES + 3]!)}`;
    return { masterId, date };
  }
  throw graphErrors.malformedId(id);
}

/**
 * An occurrence's iCalUId: its series' Global Object ID with the occurrence's date in it (see
 * `global-object-id.ts`, where every iCalUId is made), so each occurrence has its own.
 */
export { occurrenceGlobalObjectId as occurrenceICalUId } from './global-object-id';

/** A new change key: the version Graph names in `changeKey` and `@odata.etag`. */
export const newChangeKey = (): string => randomBytes(22).toString('base64');

export const etagOf = (changeKey: string): string => `W/"${changeKey}"`;

function dateBytes(date: string): Buffer {
  const [year, month, day] = date.split('-').map(Number);
  const out = Buffer.alloc(4);
  out.writeUInt16BE(year ?? 0, 0);
  out[2] = month ?? 0;
  out[3] = day ?? 0;
  return out;
}

const pad = (n: number): string => String(n).padStart(2, '0');
