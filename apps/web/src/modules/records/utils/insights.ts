import { formatDate, formatDateTime, relativeTime } from '../../../ui/utils/time';
import type { InsightHolder, PersonInsights } from '../api';
import { providerName } from './format';

/** How the last contact happened, from the salesperson's side. */
const VIA_WORDS: Record<NonNullable<PersonInsights['lastContactedVia']>, string> = {
  mail_in: 'their mail',
  mail_out: 'your mail',
  meeting: 'meeting',
};

export const viaWords = (via: PersonInsights['lastContactedVia']): string | null =>
  via === null ? null : VIA_WORDS[via];

/** What each trend means, as the API computes it (its schema's description). */
export const TREND_RULE =
  'On mails in + out + meetings: cold if none in 90 days; cooling if none in 60; warming if the last 30 days have at least 25 % more than the 30 before; cooling if at least 25 % fewer; else steady.';

export const TREND_LABEL: Record<PersonInsights['trend'], string> = {
  warming: 'Warming',
  steady: 'Steady',
  cooling: 'Cooling',
  cold: 'Cold',
};

/** "45 s", "12 min", "2 h 30 min", "3 d 4 h": a reply time at a glance, to the minute past the first. */
export function durationWords(totalSeconds: number): string {
  const seconds = Math.max(0, Math.round(totalSeconds));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** "in 5 min", "in 3 h", "in 2 d", then the date: the future counterpart of relativeTime. */
function relativeFuture(seconds: number, iso: string): string {
  if (seconds < 45) return 'in a moment';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `in ${hours} h`;
  const days = Math.round(hours / 24);
  if (days < 30) return `in ${days} d`;
  return formatDate(iso);
}

/**
 * "3 d ago · Nov 20, 2026, 02:00 PM" or "in 2 h · …": relative for a glance, absolute to be
 * sure. Past a month the relative part is the date itself, so only the absolute time shows.
 */
export function whenWords(iso: string, now: number = Date.now()): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const absolute = formatDateTime(iso);
  const relative = at > now ? relativeFuture(Math.round((at - now) / 1000), iso) : relativeTime(iso, now);
  return relative === formatDate(iso) ? absolute : `${relative} · ${absolute}`;
}

/** "3 d ago · … · meeting", or "Never". */
export function lastContactedWords(
  insights: Pick<PersonInsights, 'lastContactedAt' | 'lastContactedVia'>,
  now: number = Date.now(),
): string {
  if (insights.lastContactedAt === null) return 'Never';
  const via = viaWords(insights.lastContactedVia);
  return via === null
    ? whenWords(insights.lastContactedAt, now)
    : `${whenWords(insights.lastContactedAt, now)} · ${via}`;
}

/** The connection statuses that stop it vouching for new days, in words ('failing' as the schema names it). */
const HOLDING_STATUS: Readonly<Record<string, string>> = {
  paused: 'paused',
  failing: 'failing',
  error: 'failing',
  needs_reauth: 'needs reconnecting',
  disconnected: 'disconnected',
};

const holderName = (holder: InsightHolder): string => holder.displayName ?? providerName(holder.provider);

/** Why one connection holds the watermark back: its status if stuck, else that it has not caught up. */
function holdingReason(holder: InsightHolder): string {
  const stuck = holder.status === null ? undefined : HOLDING_STATUS[holder.status];
  if (stuck !== undefined) return stuck;
  if (holder.watermark === null)
    return holder.status === 'pending' || holder.status === 'backfilling'
      ? 'on its first sync'
      : 'not caught up yet';
  return `complete up to ${formatDateTime(holder.watermark)}`;
}

/** A holder worth naming: stuck (paused, failing…) or without its first watermark. */
export const isHolding = (holder: InsightHolder): boolean =>
  holder.watermark === null || (holder.status !== null && Object.hasOwn(HOLDING_STATUS, holder.status));

/** "Waiting for Gmail (paused)". */
export const holderWords = (holder: InsightHolder): string =>
  `Waiting for ${holderName(holder)} (${holdingReason(holder)})`;

export interface Completeness {
  /** "Complete up to …", or that every mailbox and calendar must catch up first. */
  headline: string;
  /** One line per connection the recent days wait for. */
  waiting: string[];
}

/**
 * How final the figures are: complete up to the workspace's watermark, and which connections
 * hold it back, so a salesperson knows why the recent days may still change.
 */
export function completeness(insights: Pick<PersonInsights, 'completeUpTo' | 'heldBy'>): Completeness {
  if (insights.completeUpTo === null)
    return {
      headline: 'Waiting for every connected mailbox, calendar and CRM to catch up',
      waiting: insights.heldBy.map(holderWords),
    };
  return {
    headline: `Complete up to ${formatDateTime(insights.completeUpTo)}`,
    waiting: insights.heldBy.filter(isHolding).map(holderWords),
  };
}

/** "days in Europe/Paris": the zone the windows' days are cut in, beside how final they are. */
export const zoneWords = (timeZone: string): string => `days in ${timeZone}`;

/**
 * "Computed by Syncline from 12 activities in Gmail, Google Calendar": the total counts each
 * activity once (a meeting in two calendars is one), the providers each where it came from.
 */
export function provenanceWords({
  activities: total,
  sources,
}: Pick<PersonInsights, 'activities' | 'sources'>): string {
  const activities = `${total} ${total === 1 ? 'activity' : 'activities'}`;
  const names = [...new Set(sources.filter((s) => s.activities > 0).map((s) => providerName(s.provider)))];
  return names.length === 0
    ? `Computed by Syncline from ${activities}`
    : `Computed by Syncline from ${activities} in ${names.join(', ')}`;
}

/** "8 replies, median 2 h 30 min", or null while there is no median to tell. */
export function replyWords(
  insights: Pick<PersonInsights, 'replies90' | 'medianReplySeconds90'>,
): string | null {
  if (insights.medianReplySeconds90 === null) return null;
  const replies = `${insights.replies90} ${insights.replies90 === 1 ? 'reply' : 'replies'}`;
  return `${durationWords(insights.medianReplySeconds90)} (median of ${replies})`;
}
