export { claimBareAddresses, writeAssociations } from './associations';
export { type TargetConnection, TargetConnections } from './connections';
export { splitEcho } from './echo';
export {
  EXISTING_RECORD_RULE,
  type ExistingRecordDecision,
  holdsUniqueValueOf,
  judgeExistingRecord,
  refusedCreateChange,
} from './existing-record';
export * from './idempotency-key';
export {
  type CrmInsightValues,
  crmValuesOf,
  holdsInsights,
  INSIGHT_WRITE_PERIOD_MS,
} from './insights/entity-insights';
export type { InsightsFoldOptions } from './insights/insights-fold';
export {
  isTimeZone,
  TIME_ZONE_RECORD,
  type TimeZoneChange,
  timeZoneChangeInput,
  timeZoneChangeOf,
  UnreadableTimeZoneEvent,
} from './insights/time-zone-event';
export {
  WATERMARK_RECORD,
  WATERMARKED_TYPES,
  watermarkChanges,
  watermarkOf,
} from './insights/watermark-event';
export { userEditOf } from './merge';
export { type CoalescedWrite, coalesce } from './outbox/coalesce';
export type { ClaimedOutboxRow, OutboxRow } from './outbox/outbox-row';
export { type OwingEntity, owedWrites } from './owed-writes';
export { versionMayReplace } from './provider-version';
export { queueReconcileCreates } from './reconcile-creates';
export { oweReconciledAssociations } from './reconciled-associations';
export {
  ASSOCIATION_OPS,
  type AssociationFields,
  type AssociationOp,
  oweAssociations,
} from './relation-writeback';
export { type StageOwed, SyncStage, type SyncStageOptions } from './sync-stage';
export {
  CLAIM_LIFETIME_MS,
  foldWriteEvents,
  isWriteEvent,
  receiptEventKey,
  receiptEventKeySql,
  recordVersionChange,
  WRITE_FIELD,
  type WriteClaim,
  type WriteReceiptInput,
  writeClaimChange,
  writeReceiptChange,
} from './write-events';
export {
  belongsIn,
  CONNECTORS,
  CRM_RECORD_TYPES,
  canCreateIn,
  canMergeIn,
  DELETE_POLICIES,
  type DeletePolicy,
  isInvitationCopy,
  isPersonal,
  isWritable,
  writableField,
} from './writeback-rules';
