import type { Tone } from '../../../ui/StatusBadge';
import { formatDateTime, relativeTime } from '../../../ui/utils/time';
import { TREND_LABEL, viaWords } from '../../records/utils/insights';
import type { Trend } from './list-search';

/** A list row's insights at a glance, as the list API answers them (null for types without). */
export interface RowInsights {
  lastContactedAt: string | null;
  lastContactedVia: 'mail_in' | 'mail_out' | 'meeting' | null;
  nextMeetingAt: string | null;
  trend: Trend;
}

/** Warm reads as good news, cooling as a warning; cold is a fact, not an alarm. */
export const TREND_TONE: Record<Trend, Tone> = {
  warming: 'success',
  steady: 'neutral',
  cooling: 'warning',
  cold: 'info',
};

/** The trend filter's choices; cold says that it takes in the records never contacted. */
export const TREND_OPTIONS: readonly { value: Trend; label: string }[] = [
  { value: 'warming', label: TREND_LABEL.warming },
  { value: 'steady', label: TREND_LABEL.steady },
  { value: 'cooling', label: TREND_LABEL.cooling },
  { value: 'cold', label: 'Cold (incl. never contacted)' },
];

export interface LastContactedCell {
  /** "3 d ago", or "never". */
  text: string;
  /** The exact time and how ("Dec 10, 2026, 09:30 AM · your mail"), for a tooltip; null when never. */
  detail: string | null;
  trend: { label: string; tone: Tone };
}

/** The list's "Last contacted" cell: relative as the list's other dates, "never" without a contact. */
export function lastContactedCell(insights: RowInsights | null, now: number = Date.now()): LastContactedCell {
  const trend = insights?.trend ?? 'cold';
  const badge = { label: TREND_LABEL[trend], tone: TREND_TONE[trend] };
  if (insights === null || insights.lastContactedAt === null)
    return { text: 'never', detail: null, trend: badge };
  const via = viaWords(insights.lastContactedVia);
  const absolute = formatDateTime(insights.lastContactedAt);
  return {
    text: relativeTime(insights.lastContactedAt, now),
    detail: via === null ? absolute : `${absolute} · ${via}`,
    trend: badge,
  };
}
