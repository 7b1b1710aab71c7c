import { metricsEqual } from '../metrics';
import {
  type ActivityDiff,
  type ActivityKind,
  DEFAULT_PARAMS,
  type InsightEmission,
  type InsightMetrics,
  type InsightsParams,
  personId,
} from '../types';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export const params = (overrides: Partial<InsightsParams> = {}): InsightsParams => ({
  timeZone: 'UTC',
  ...DEFAULT_PARAMS,
  ...overrides,
});

let nextActivity = 0;

export function diff(
  kind: ActivityKind,
  eventTime: number,
  options: { people?: string[]; sign?: 1 | -1; thread?: string; id?: string; connection?: string } = {},
): ActivityDiff {
  return {
    activityId: options.id ?? `a${nextActivity++}`,
    personIds: (options.people ?? ['p1']).map(personId),
    kind,
    eventTime,
    sign: options.sign ?? 1,
    sourceConnectionId: options.connection ?? 'gmail',
    ...(options.thread === undefined ? {} : { threadId: options.thread }),
  };
}

/** The opposite contribution of `d`: its deletion, or the first half of a move. */
export const retraction = (d: ActivityDiff): ActivityDiff => ({ ...d, sign: d.sign === 1 ? -1 : 1 });

export interface LivePane {
  personId: string;
  windowEnd: string;
  metrics: InsightMetrics;
}

/**
 * The results table a consumer keeps, applied strictly: every emission must retract exactly
 * the pane in force for its key, or the changelog is broken.
 */
export class PaneTable {
  private readonly live = new Map<string, LivePane>();

  apply(emissions: readonly InsightEmission[]): void {
    for (const e of emissions) {
      const key = `${e.personId}|${e.windowEnd}`;
      const current = this.live.get(key)?.metrics ?? null;
      if (!metricsEqual(current, e.retracts)) {
        throw new Error(
          `${e.kind} ${key} retracts ${JSON.stringify(e.retracts)} but ${JSON.stringify(current)} is in force`,
        );
      }
      if (e.metrics === null) this.live.delete(key);
      else this.live.set(key, { personId: e.personId, windowEnd: e.windowEnd, metrics: e.metrics });
    }
  }

  /** Panes up to a day (YYYY-MM-DD), ordered by person then day. */
  through(windowEnd: string): LivePane[] {
    return [...this.live.values()]
      .filter((p) => p.windowEnd <= windowEnd)
      .sort((a, b) =>
        a.personId !== b.personId ? (a.personId < b.personId ? -1 : 1) : a.windowEnd < b.windowEnd ? -1 : 1,
      );
  }

  get(person: string, windowEnd: string): InsightMetrics | undefined {
    return this.live.get(`${person}|${windowEnd}`)?.metrics;
  }
}
