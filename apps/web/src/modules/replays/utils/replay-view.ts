import { ApiError } from '../../../api/errors';
import type { Tone } from '../../../ui/StatusBadge';
import { formatDateTime } from '../../../ui/utils/time';

type From = 'beginning' | { eventTime: string };

export const fromLabel = (from: From): string =>
  from === 'beginning' ? 'From the beginning' : `From ${formatDateTime(from.eventTime)}`;

export const modeLabel = (mode: 'preview' | 'apply'): string => (mode === 'preview' ? 'Preview' : 'Apply');

export const STATUS_TONE: Record<'queued' | 'running' | 'succeeded' | 'failed', Tone> = {
  queued: 'neutral',
  running: 'info',
  succeeded: 'success',
  failed: 'danger',
};

/** How far it got: a percentage once the events are counted (null before), and the same in words. */
export function progressOf(replay: {
  status: string;
  progress: { eventsTotal: number | null; eventsReplayed: number };
}): { percent: number | null; text: string } {
  const { eventsTotal, eventsReplayed } = replay.progress;
  if (replay.status === 'queued') return { percent: null, text: 'Waiting to start' };
  if (eventsTotal === null) return { percent: null, text: 'Counting events' };
  const percent = eventsTotal === 0 ? 100 : Math.min(100, Math.round((eventsReplayed / eventsTotal) * 100));
  return {
    percent,
    text: `${eventsReplayed.toLocaleString('en')} of ${eventsTotal.toLocaleString('en')} events`,
  };
}

/** A value as the report shows it: text as is, nothing as "(empty)", anything else as JSON. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '(empty)';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The items of one page (1-based) and how many pages there are. */
export function pageOf<T>(items: readonly T[], page: number, size: number): { items: T[]; pages: number } {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const current = Math.max(1, Math.min(page, pages));
  return { items: items.slice((current - 1) * size, current * size), pages };
}

const count = (n: number, one: string, many = `${one}s`) =>
  `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/**
 * What applying a preview will do, one line per kind of change that has any, from the preview's
 * totals (the apply recomputes them from the log as it stands then).
 */
export function applyConsequences(summary: {
  changes: number;
  created: number;
  gone: number;
  conflictsAppeared: number;
  conflictsDisappeared: number;
  linksMoved: number;
  writes: number;
}): string[] {
  const lines = [
    summary.changes > 0 && `Change field values on ${count(summary.changes, 'record')}.`,
    summary.created > 0 && `Create ${count(summary.created, 'record')}.`,
    summary.gone > 0 && `Remove ${count(summary.gone, 'record')} that no longer come out of the log.`,
    summary.conflictsAppeared > 0 &&
      `Open ${count(summary.conflictsAppeared, 'conflict')} for people to settle.`,
    summary.conflictsDisappeared > 0 && `Close ${count(summary.conflictsDisappeared, 'conflict')}.`,
    summary.linksMoved > 0 && `Move ${count(summary.linksMoved, 'source record')} to another record.`,
    summary.writes > 0 && `Write ${count(summary.writes, 'change')} to the connected systems.`,
  ];
  return lines.filter((line): line is string => typeof line === 'string');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The replay a 409 `replay_running` says is in the way; null for any other error. */
export function runningReplayId(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.code !== 'replay_running') return null;
  const id = error.details.replayId;
  return typeof id === 'string' && UUID.test(id) ? id : null;
}

/**
 * The event time a replay starts from, from the picker's local "YYYY-MM-DD HH:mm:ss" (the
 * browser's time zone), as the ISO time the API takes; null when empty or unreadable.
 */
export function eventTimeOf(local: string | null): string | null {
  if (local === null || local.trim() === '') return null;
  const at = new Date(local.trim().replace(' ', 'T'));
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}
