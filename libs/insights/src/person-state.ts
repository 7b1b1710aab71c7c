import type { ActivityKind, PersonId } from './types';

/** Kinds as small numbers, in the order the same instant is read in (a reply may share its mail's ms). */
export const KIND_CODE = { mail_in: 0, mail_out: 1, meeting: 2 } as const satisfies Record<
  ActivityKind,
  number
>;
export type KindCode = 0 | 1 | 2;
export const KIND_OF: readonly ActivityKind[] = ['mail_in', 'mail_out', 'meeting'];
export const NO_THREAD = -1;

/**
 * The contributions one person holds for one (time, kind, thread): `m` is the sum of their
 * signs. m = 1 is one activity; m = 2 two activities alike in all three; m = -1 a retraction
 * whose addition has not arrived yet (it shows nowhere until it nets out). Never 0: an entry
 * that nets to 0 is removed.
 */
export interface Entry {
  t: number;
  /** Local day of `t`, derived (not stored in the encoding). */
  day: number;
  kind: KindCode;
  /** 32-bit hash of the thread id, NO_THREAD for meetings and thread-less mail. */
  thread: number;
  m: number;
  /**
   * Derived: for our mail whose previous mail in its thread (among entries with m > 0) is
   * theirs, at most the reply gap before, the time between them; else -1.
   */
  reply: number;
}

export interface PersonState {
  readonly id: PersonId;
  /** Sorted by (t, kind, thread). */
  entries: Entry[];
  /** Latest time per kind among entries folded away from the horizon (-1: none). */
  floor: [number, number, number];
}

export const newPerson = (id: PersonId): PersonState => ({ id, entries: [], floor: [-1, -1, -1] });

/** FNV-1a, 32 bits: threads are told apart within one person's activities. */
export function threadKey(threadId: string | undefined): number {
  if (threadId === undefined) return NO_THREAD;
  let hash = 0x811c9dc5;
  for (let i = 0; i < threadId.length; i++) {
    hash ^= threadId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

const compare = (a: Entry, t: number, kind: number, thread: number): number =>
  a.t !== t ? a.t - t : a.kind !== kind ? a.kind - kind : a.thread - thread;

function lowerBound(entries: readonly Entry[], t: number, kind: number, thread: number): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(entries[mid]!, t, kind, thread) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const hasDay = (p: PersonState, day: number): boolean => p.entries.some((e) => e.day === day);

export interface DayChange {
  /** The person had no entry on this day before. */
  dayAdded: boolean;
  /** The person has no entry on this day any more. */
  dayEmptied: boolean;
}

/** Adds one signed contribution. Order-free: any arrival order of the same diffs ends equal. */
export function addContribution(
  p: PersonState,
  t: number,
  day: number,
  kind: KindCode,
  thread: number,
  sign: number,
): DayChange {
  const at = lowerBound(p.entries, t, kind, thread);
  const found = p.entries[at];
  if (found && compare(found, t, kind, thread) === 0) {
    found.m += sign;
    if (found.m !== 0) return { dayAdded: false, dayEmptied: false };
    p.entries.splice(at, 1);
    return { dayAdded: false, dayEmptied: !hasDay(p, day) };
  }
  const dayAdded = !hasDay(p, day);
  p.entries.splice(at, 0, { t, day, kind, thread, m: sign, reply: -1 });
  return { dayAdded, dayEmptied: false };
}

/** Recomputes `reply` along one thread, or along all of them. */
export function linkReplies(p: PersonState, maxReplyGapMs: number, thread?: number): void {
  const threads = thread === undefined ? new Set(p.entries.map((e) => e.thread)) : [thread];
  for (const th of threads) {
    if (th === NO_THREAD) continue;
    let before: Entry | undefined;
    for (const e of p.entries) {
      if (e.thread !== th || e.kind === 2) continue;
      e.reply = -1;
      if (e.m <= 0) continue;
      if (e.kind === 1 && before?.kind === 0 && e.t - before.t <= maxReplyGapMs) e.reply = e.t - before.t;
      before = e;
    }
  }
}

/**
 * Folds a day's entries away: only their latest time per kind is kept (for last contacted).
 * Safe once no diff for that day can be accepted any more and no window still revisable
 * reaches it; unsettled retractions (m < 0) can then never net out and are dropped.
 */
export function pruneDay(p: PersonState, day: number, maxReplyGapMs: number): void {
  const kept: Entry[] = [];
  for (const e of p.entries) {
    if (e.day !== day) kept.push(e);
    else if (e.m > 0 && e.t > p.floor[e.kind]) p.floor[e.kind] = e.t;
  }
  p.entries = kept;
  // As a decoded state would: a mail whose predecessor was folded away answers nothing here.
  linkReplies(p, maxReplyGapMs);
}
