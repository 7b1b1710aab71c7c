import { describe, expect, it } from 'vitest';
import {
  exchangeGlobalObjectId,
  invitationGlobalObjectId,
  invitationUidProblem,
  occurrenceGlobalObjectId,
} from './global-object-id';

const CLASS_ID = '040000008200E00074C5B7101A82E008';
const hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex').toUpperCase();

describe('Global Object IDs (the iCalUIds Graph reports)', () => {
  it('carries an invitation’s UID behind vCal-Uid, with zero date and creation time, as Graph shows a Gmail invitation', () => {
    // A Graph iCalUId of a meeting sent from Gmail (stackoverflow.com/questions/36985390).
    expect(invitationGlobalObjectId('qa87q2t552detf773508pdrchc@google.com')).toBe(
      '040000008200E00074C5B7101A82E0080000000000000000000000000000000000000000320000007643616C2D55696401000000716138377132743535326465746637373335303870647263686340676F6F676C652E636F6D00',
    );
    const uid = 'Réunion@calendar.example';
    const size = Buffer.alloc(4);
    size.writeUInt32LE(8 + 4 + Buffer.byteLength(uid) + 1);
    expect(invitationGlobalObjectId(uid)).toBe(
      `${CLASS_ID}${'00'.repeat(4 + 8 + 8)}${size.toString('hex').toUpperCase()}${hex('vCal-Uid')}01000000${hex(uid)}00`,
    );
  });

  it('gives an event made in the mailbox 16 opaque bytes and its creation time as a little-endian FILETIME', () => {
    // MS-OXOCAL 4.4.1: created 2008-02-20 17:16:51.109 UTC, FILETIME bytes 50 25 D4 61 E4 73 C8 01.
    const id = exchangeGlobalObjectId(Date.parse('2008-02-20T17:16:51.109Z'));
    expect(id).toMatch(
      new RegExp(`^${CLASS_ID}000000005025D461E473C801000000000000000010000000[0-9A-F]{32}$`),
    );
    expect(exchangeGlobalObjectId(0)).not.toBe(exchangeGlobalObjectId(0));
  });

  it('puts an occurrence’s original date in YH YL M D, the year big-endian, and leaves the rest', () => {
    const series = invitationGlobalObjectId('abc123@google.com');
    const occurrence = occurrenceGlobalObjectId(series, '2008-03-25');
    // MS-OXOCAL 4.4.1: 25 March 2008 is 07 D8 03 19.
    expect(occurrence).toBe(`${series.slice(0, 32)}07D80319${series.slice(40)}`);
    expect(occurrenceGlobalObjectId(occurrence, '2030-12-01')).toBe(
      `${series.slice(0, 32)}07EE0C01${series.slice(40)}`,
    );
    expect(() => occurrenceGlobalObjectId('abc123@google.com', '2030-12-01')).toThrow(
      /Not a Global Object ID/,
    );
  });

  it('takes any non-empty UID without surrounding space or control characters', () => {
    expect(invitationUidProblem('abc123@google.com')).toBeUndefined();
    expect(invitationUidProblem('{81412D3C-2A24-4E9D-B20E-11F7BBE92799}')).toBeUndefined();
    expect(invitationUidProblem(42)).toBe('must be a string');
    expect(invitationUidProblem('  ')).toBe('must not be empty');
    expect(invitationUidProblem(' abc@google.com')).toBe('must not start or end with space');
    expect(invitationUidProblem('abc\u0000@google.com')).toBe('must not hold control characters');
  });
});
