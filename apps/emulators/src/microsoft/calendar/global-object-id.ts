import { randomBytes } from 'node:crypto';

/**
 * Exchange's Global Object ID (MS-OXOCAL 2.2.1.27 PidLidGlobalObjectId), which Graph reports
 * as an event's `iCalUId`, in upper-case hex:
 *
 * | bytes | what |
 * |---|---|
 * | 0–15 | class id `040000008200E00074C5B7101A82E008` |
 * | 16–19 | YH YL M D: an occurrence's original date (year big-endian); zero for a series or a single event |
 * | 20–27 | creation time, a FILETIME (little-endian) |
 * | 28–35 | reserved, zero |
 * | 36–39 | the data's size (little-endian) |
 * | 40– | the data |
 *
 * A meeting made in Exchange has 16 opaque bytes of data. A meeting that came as an
 * invitation from another system carries that system's UID (MS-ASEMAIL 2.2.2.37 GlobalObjId):
 * `vCal-Uid`, `01 00 00 00`, the UID in UTF-8, `00`, with a creation time of zero (as in the
 * examples of MS-ASEMAIL 4.3 and what Graph shows of a Gmail invitation).
 */
const CLASS_ID = Buffer.from('040000008200E00074C5B7101A82E008', 'hex');
const HEADER_BYTES = 40;
const VCAL_UID = Buffer.from([...Buffer.from('vCal-Uid', 'ascii'), 0x01, 0x00, 0x00, 0x00]);
/** 100-nanosecond intervals from 1601-01-01 (FILETIME's epoch) to 1970-01-01. */
const FILETIME_AT_UNIX_EPOCH = 116_444_736_000_000_000n;

function encode(creationFiletime: bigint, data: Buffer): string {
  const header = Buffer.alloc(HEADER_BYTES);
  CLASS_ID.copy(header, 0);
  header.writeBigUInt64LE(creationFiletime, 20);
  header.writeUInt32LE(data.length, 36);
  return Buffer.concat([header, data]).toString('hex').toUpperCase();
}

/** The iCalUId of an event made in this mailbox, created at `now` (ms). */
export function exchangeGlobalObjectId(now: number): string {
  return encode(BigInt(now) * 10_000n + FILETIME_AT_UNIX_EPOCH, randomBytes(16));
}

/**
 * The iCalUId of an event that came as an invitation from another system whose UID is `uid`
 * (Google Calendar's `…@google.com`): the same for every mailbox it reached.
 */
export function invitationGlobalObjectId(uid: string): string {
  return encode(0n, Buffer.concat([VCAL_UID, Buffer.from(uid, 'utf8'), Buffer.from([0])]));
}

/**
 * Why a UID cannot be carried in a Global Object ID, or undefined when it can: it must be
 * non-empty text without surrounding space or control characters (a NUL would end it early).
 */
export function invitationUidProblem(uid: unknown): string | undefined {
  if (typeof uid !== 'string') return 'must be a string';
  if (!uid.trim()) return 'must not be empty';
  if (uid.trim() !== uid) return 'must not start or end with space';
  if (/\p{Cc}/u.test(uid)) return 'must not hold control characters';
  return undefined;
}

/** One occurrence's iCalUId: its series' with the occurrence's original date (YYYY-MM-DD) in YH YL M D. */
export function occurrenceGlobalObjectId(seriesId: string, date: string): string {
  const bytes = Buffer.from(seriesId, 'hex');
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, CLASS_ID.length).equals(CLASS_ID))
    throw new Error(`Not a Global Object ID: ${seriesId}`);
  const [year, month, day] = date.split('-').map(Number);
  bytes.writeUInt16BE(year ?? 0, 16);
  bytes[18] = month ?? 0;
  bytes[19] = day ?? 0;
  return bytes.toString('hex').toUpperCase();
}
