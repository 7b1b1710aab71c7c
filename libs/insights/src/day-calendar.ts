import { err, ok, type Result } from '@syncline/core';
import type { InsightsError } from './types';

export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** No zone has ever been further than this from UTC (LMT included). */
const MAX_OFFSET_MS = 18 * HOUR_MS;

/**
 * The local days of one IANA time zone, numbered as whole days since 1970-01-01 on that
 * zone's wall clock, so day D's date is `new Date(D * DAY_MS)` read in UTC. A day lasts 23
 * or 25 hours around a DST change. Offsets come from the runtime's ICU data (Intl), cached
 * per UTC hour: an hour whose two ends disagree holds a transition and is asked per instant.
 */
export class DayCalendar {
  private readonly hourOffsets = new Map<number, number>();
  private readonly dayStarts = new Map<number, number>();

  private constructor(
    readonly timeZone: string,
    private readonly formatter: Intl.DateTimeFormat | null,
  ) {}

  static create(timeZone: string): Result<DayCalendar, InsightsError> {
    let formatter: Intl.DateTimeFormat;
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      return err({ code: 'InvalidParams', message: `unknown time zone ${JSON.stringify(timeZone)}` });
    }
    const utc = formatter.resolvedOptions().timeZone;
    return ok(new DayCalendar(timeZone, utc === 'UTC' || utc === 'Etc/UTC' ? null : formatter));
  }

  /** The local day an instant falls on. */
  dayOf(t: number): number {
    return Math.floor((t + this.offsetAt(t)) / DAY_MS);
  }

  /**
   * The instant day D starts: from it on, every instant falls on D or later. Where the clock
   * goes back across midnight (America/Santiago), that is after the repeated hour; where
   * midnight is skipped, it is the transition.
   */
  startOfDay(day: number): number {
    const cached = this.dayStarts.get(day);
    if (cached !== undefined) return cached;
    const nominal = day * DAY_MS;
    let before = nominal - MAX_OFFSET_MS;
    for (let h = before; h <= nominal + MAX_OFFSET_MS; h += HOUR_MS) {
      if (this.dayOf(h) < day) before = h;
    }
    let after = before + HOUR_MS;
    while (after - before > 1) {
      const mid = Math.floor((before + after) / 2);
      if (this.dayOf(mid) >= day) after = mid;
      else before = mid;
    }
    this.dayStarts.set(day, after);
    return after;
  }

  endOfDay(day: number): number {
    return this.startOfDay(day + 1);
  }

  /** The last day that has ended by instant `t` (-Infinity before any). */
  lastEndedDay(t: number): number {
    if (!Number.isFinite(t)) return t;
    const day = this.dayOf(t);
    return this.startOfDay(day) <= t ? day - 1 : day - 2;
  }

  offsetAt(t: number): number {
    if (this.formatter === null) return 0;
    const hour = Math.floor(t / HOUR_MS);
    let offset = this.hourOffsets.get(hour);
    if (offset === undefined) {
      const start = this.exactOffset(hour * HOUR_MS);
      offset = start === this.exactOffset(hour * HOUR_MS + HOUR_MS - 1) ? start : Number.NaN;
      this.hourOffsets.set(hour, offset);
    }
    return Number.isNaN(offset) ? this.exactOffset(t) : offset;
  }

  private exactOffset(t: number): number {
    const parts = this.formatter!.formatToParts(t);
    const part = (type: Intl.DateTimeFormatPartTypes): number =>
      Number(parts.find((p) => p.type === type)?.value);
    const wall = Date.UTC(
      part('year'),
      part('month') - 1,
      part('day'),
      part('hour'),
      part('minute'),
      part('second'),
    );
    return wall - (t - (((t % 1000) + 1000) % 1000));
  }
}

const labels = new Map<number, string>();

/** Day D as a local date, YYYY-MM-DD. */
export function dayLabel(day: number): string {
  let label = labels.get(day);
  if (label === undefined) {
    label = new Date(day * DAY_MS).toISOString().slice(0, 10);
    if (labels.size < 100_000) labels.set(day, label);
  }
  return label;
}
