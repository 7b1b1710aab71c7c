import { describe, expect, it } from 'vitest';
import {
  isTimeZone,
  timeZoneChangeInput,
  timeZoneChangeOf,
  UnreadableTimeZoneEvent,
} from './time-zone-event';

const WS = '0190c000-0000-7000-8000-000000000001';
const OWN = '0190c000-0000-7000-8000-0000000000c1';

describe('a time zone on the log', () => {
  it('knows IANA zones and UTC, and nothing else', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });

  it('reads back the change it wrote, one event key per revision', () => {
    const change = timeZoneChangeInput(WS, OWN, { timeZone: 'Asia/Tokyo', version: 3 });
    expect(change).toMatchObject({ op: 'time_zone', eventKey: 'time_zone:3', connectionId: OWN });
    expect(timeZoneChangeOf({ op: change.op, workspaceId: WS, fields: change.fields ?? {} })).toEqual({
      workspaceId: WS,
      timeZone: 'Asia/Tokyo',
      version: 3,
    });
    expect(timeZoneChangeOf({ op: 'upsert', workspaceId: WS, fields: {} })).toBeUndefined();
  });

  it('refuses an event whose zone no runtime knows: the consumer dead-letters it', () => {
    const read = () =>
      timeZoneChangeOf({
        op: 'time_zone',
        workspaceId: WS,
        fields: { timeZone: 'Nowhere/Else', version: 1 },
      });
    expect(read).toThrow(UnreadableTimeZoneEvent);
  });
});
