import type { Brand } from '@syncline/core';

/** A canonical person (the entity a timeline activity is linked to). */
export type PersonId = Brand<string, 'PersonId'>;
export const personId = (value: string): PersonId => value as PersonId;

/** What an activity is, seen from the person it concerns. */
export const ACTIVITY_KINDS = ['mail_in', 'mail_out', 'meeting'] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/**
 * One activity's contribution to its people's insights, added (+1) or taken back (-1). The
 * sync stage knows each activity's previous and new version: a new mail is a +1, a deleted
 * mail or cancelled meeting a -1 of what it contributed, a moved meeting a -1 of the old
 * time and a +1 of the new one.
 */
export interface ActivityDiff {
  activityId: string;
  personIds: readonly PersonId[];
  kind: ActivityKind;
  /** Event time (epoch ms): a mail's sent time, a meeting's start. Never its arrival. */
  eventTime: number;
  sign: 1 | -1;
  sourceConnectionId: string;
  /** Mails only: replies are paired within a thread. */
  threadId?: string | undefined;
}

export const CONNECTION_STATUSES = ['live', 'paused', 'failing'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/** Everything the fold reads: its state is a function of the sequence of these alone. */
export type InsightsInput =
  | { type: 'diff'; diff: ActivityDiff }
  /** A connection's cursor guarantees every event before `eventTime` has been delivered. */
  | { type: 'watermark'; connectionId: string; eventTime: number }
  | { type: 'connect'; connectionId: string; eventTime: number }
  | { type: 'status'; connectionId: string; status: ConnectionStatus }
  | { type: 'disconnect'; connectionId: string }
  /** Processing time, given as input so that a replay sees the same clock. */
  | { type: 'tick'; now: number }
  /**
   * Everything a record counts for now, replacing what it held: for a record whose activities
   * moved to it from another (a merge, an unmerge), which are no late events. Its closed days
   * keep their panes; the days still open to late diffs are revised, and its current result
   * (last contacted included) holds all of them.
   */
  | { type: 'replace'; personId: PersonId; contributions: readonly ReplacedContribution[] };

/** One activity a replaced record counts for. */
export interface ReplacedContribution {
  kind: ActivityKind;
  eventTime: number;
  threadId?: string | undefined;
}

export interface InsightsParams {
  /** IANA zone the workspace's days are cut in. */
  timeZone: string;
  /** How long after a day's end (in watermark time) a diff for it still revises results. */
  allowedLatenessMs: number;
  /** Early results are emitted at most this often (processing time). */
  earlyIntervalMs: number;
  /** An outbound mail later than this after the inbound one before it is not a reply. */
  maxReplyGapMs: number;
}

export const DEFAULT_PARAMS: Omit<InsightsParams, 'timeZone'> = {
  allowedLatenessMs: 3 * 86_400_000,
  earlyIntervalMs: 30_000,
  maxReplyGapMs: 30 * 86_400_000,
};

export interface WindowCounts {
  mailsIn: number;
  mailsOut: number;
  meetings: number;
}

export const TRENDS = ['warming', 'steady', 'cooling', 'cold'] as const;
export type Trend = (typeof TRENDS)[number];

/** One person's insights for the window ending on a day (or as of an instant). */
export interface InsightMetrics {
  last7: WindowCounts;
  last30: WindowCounts;
  last90: WindowCounts;
  lastContactedAt: number | null;
  lastContactedVia: ActivityKind | null;
  lastInboundAt: number | null;
  lastOutboundAt: number | null;
  /** Replies (by us, to their mail) whose outbound mail falls in the last 90 days. */
  replies90: number;
  medianReplyMs90: number | null;
  trend: Trend;
}

export type TriggerKind = 'early' | 'on_time' | 'late';

/**
 * A change to the results table, keyed by (person, windowEnd). `metrics` is the pane now in
 * force for that key, null when the day no longer has a pane of its own (the person's result
 * for that day is then the latest earlier pane); `retracts` is the pane it replaces, null
 * when there was none.
 */
export interface InsightEmission {
  kind: TriggerKind;
  personId: PersonId;
  /** The window's last day, as a local date (YYYY-MM-DD) in the workspace's zone. */
  windowEnd: string;
  metrics: InsightMetrics | null;
  retracts: InsightMetrics | null;
  /** The workspace watermark when emitted: the result is complete up to it. */
  completeUpTo: number;
}

/** Why a well-formed diff changed nothing (a malformed input is refused as InvalidInput instead). */
export const SIDE_OUTPUT_REASONS = ['beyond_allowed_lateness'] as const;
export type SideOutputReason = (typeof SIDE_OUTPUT_REASONS)[number];

/** A diff that changed nothing, kept (and counted) so that nothing is dropped silently. */
export interface SideOutputRecord {
  reason: SideOutputReason;
  diff: ActivityDiff;
}

export interface StepOutput {
  emissions: InsightEmission[];
  sideOutput: SideOutputRecord[];
}

export const INSIGHTS_ERROR_CODES = [
  'InvalidInput',
  'UnknownConnection',
  'WatermarkRegressed',
  'InvalidParams',
  'CorruptState',
  'StateMismatch',
] as const;
export type InsightsErrorCode = (typeof INSIGHTS_ERROR_CODES)[number];

export interface InsightsError {
  code: InsightsErrorCode;
  message: string;
}
