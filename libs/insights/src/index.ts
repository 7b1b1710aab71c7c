// The public surface: the engine (the fold), its inputs and outputs, and the batch reference.
export {
  type ActivityVersion,
  activityDiffs,
  type Contribution,
  contributionDiffs,
  contributionsOf,
} from './activity-contributions';
export { type BatchPane, batchCompute, batchPanes } from './batch';
export { DAY_MS, DayCalendar, dayLabel } from './day-calendar';
export type { InsightsCounters } from './engine-state';
export { InsightsEngine, type InsightsStats, type PersonSnapshot } from './insights-engine';
export { parseInput } from './insights-input';
export { EMPTY_METRICS, medianOf, metricsEqual, trendOf, WINDOW_DAYS } from './metrics';
export * from './types';
export { type ConnectionWatermark, WatermarkTracker } from './watermark-tracker';
