import { describe, expect, it } from 'vitest';
import { DAY_MS, DayCalendar, dayLabel } from './day-calendar';

const HOUR = 3_600_000;
const calendar = (zone: string): DayCalendar => {
  const made = DayCalendar.create(zone);
  if (!made.ok) throw new Error(made.error.message);
  return made.value;
};
const at = (iso: string): number => Date.parse(iso);
const dayNamed = (label: string): number => at(`${label}T00:00:00Z`) / DAY_MS;
const lengthOf = (c: DayCalendar, label: string): number =>
  (c.endOfDay(dayNamed(label)) - c.startOfDay(dayNamed(label))) / HOUR;

describe('DayCalendar', () => {
  it('cuts UTC days at midnight UTC', () => {
    const utc = calendar('UTC');
    expect(dayLabel(utc.dayOf(at('2026-03-01T23:59:59.999Z')))).toBe('2026-03-01');
    expect(dayLabel(utc.dayOf(at('2026-03-02T00:00:00Z')))).toBe('2026-03-02');
    expect(utc.startOfDay(dayNamed('2026-03-02'))).toBe(at('2026-03-02T00:00:00Z'));
  });

  it('gives Berlin a 23-hour day in spring and a 25-hour day in autumn', () => {
    const berlin = calendar('Europe/Berlin');
    expect(lengthOf(berlin, '2026-03-28')).toBe(24);
    expect(lengthOf(berlin, '2026-03-29')).toBe(23);
    expect(lengthOf(berlin, '2026-10-25')).toBe(25);
    expect(berlin.startOfDay(dayNamed('2026-03-29'))).toBe(at('2026-03-28T23:00:00Z'));
    expect(berlin.startOfDay(dayNamed('2026-03-30'))).toBe(at('2026-03-29T22:00:00Z'));
    // 00:30 local on the 29th is 23:30 UTC on the 28th.
    expect(dayLabel(berlin.dayOf(at('2026-03-28T23:30:00Z')))).toBe('2026-03-29');
    expect(dayLabel(berlin.dayOf(at('2026-03-28T22:59:59.999Z')))).toBe('2026-03-28');
  });

  it('handles zones whose midnight is skipped or repeated (Santiago) and half-hour offsets', () => {
    const santiago = calendar('America/Santiago');
    // 2026-09-06: clocks jump from 00:00 to 01:00; the day starts at the jump and lasts 23 h.
    expect(santiago.startOfDay(dayNamed('2026-09-06'))).toBe(at('2026-09-06T04:00:00Z'));
    expect(lengthOf(santiago, '2026-09-06')).toBe(23);
    // 2026-04-05: 24:00 on the 4th goes back to 23:00; the 5th starts after the repeated hour.
    expect(santiago.startOfDay(dayNamed('2026-04-05'))).toBe(at('2026-04-05T04:00:00Z'));
    expect(lengthOf(santiago, '2026-04-04')).toBe(25);
    const kolkata = calendar('Asia/Kolkata');
    expect(dayLabel(kolkata.dayOf(at('2026-03-01T18:29:59.999Z')))).toBe('2026-03-01');
    expect(dayLabel(kolkata.dayOf(at('2026-03-01T18:30:00Z')))).toBe('2026-03-02');
  });

  it('names the last day that has ended by an instant', () => {
    const berlin = calendar('Europe/Berlin');
    expect(dayLabel(berlin.lastEndedDay(at('2026-03-29T22:00:00Z')))).toBe('2026-03-29');
    expect(dayLabel(berlin.lastEndedDay(at('2026-03-29T21:59:59.999Z')))).toBe('2026-03-28');
    expect(berlin.lastEndedDay(Number.NEGATIVE_INFINITY)).toBe(Number.NEGATIVE_INFINITY);
  });

  it('refuses an unknown zone', () => {
    const made = DayCalendar.create('Mars/Olympus_Mons');
    expect(made.ok).toBe(false);
    if (!made.ok) expect(made.error.code).toBe('InvalidParams');
  });
});
