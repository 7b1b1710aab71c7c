import type { PersonState } from './person-state';
import type { InsightMetrics } from './types';
import { WatermarkTracker } from './watermark-tracker';

export interface InsightsCounters {
  /** Diffs that changed state (late ones included). */
  accepted: number;
  /** Accepted diffs for a day whose results had already been emitted on time. */
  late: number;
  /** Side output, per reason. */
  beyondAllowedLateness: number;
  invalidInput: number;
}

/** Everything a replay must reproduce: the encoding stores exactly this. */
export interface EngineState {
  tracker: WatermarkTracker;
  persons: Map<string, PersonState>;
  /** The last day whose windows were emitted on time (-Infinity before the first). */
  lastFiredDay: number;
  /** Processing time of the last early firing (-Infinity before the first). */
  lastEarlyAt: number;
  /** People changed since the last early firing. */
  touched: Set<PersonState>;
  /** The early pane in force per person for the open day (lastFiredDay + 1). */
  earlyPanes: Map<PersonState, InsightMetrics>;
  counters: InsightsCounters;
}

export const newEngineState = (): EngineState => ({
  tracker: new WatermarkTracker(),
  persons: new Map(),
  lastFiredDay: Number.NEGATIVE_INFINITY,
  lastEarlyAt: Number.NEGATIVE_INFINITY,
  touched: new Set(),
  earlyPanes: new Map(),
  counters: { accepted: 0, late: 0, beyondAllowedLateness: 0, invalidInput: 0 },
});
