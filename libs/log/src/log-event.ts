import type { ChangeOp, EntityType } from '@syncline/core';

/** A change as stored on the log, with its position. */
export interface LogEvent {
  partition: number;
  offset: number;
  workspaceId: string;
  connectionId: string;
  eventKey: string;
  entityType: EntityType;
  externalId: string;
  op: ChangeOp;
  fields: Record<string, unknown>;
  fieldTimes: Record<string, string>;
  eventTime: Date;
  ingestedAt: Date;
  providerVersion: string | null;
  origin: Record<string, unknown> | null;
}

export const LOG_EVENT_COLUMNS = `partition, "offset", workspace_id, connection_id, event_key, entity_type,
  external_id, op, fields, field_times, event_time, ingested_at, provider_version, origin`;

export interface LogEventRow {
  partition: number;
  offset: string;
  workspace_id: string;
  connection_id: string;
  event_key: string;
  entity_type: EntityType;
  external_id: string;
  op: ChangeOp;
  fields: Record<string, unknown>;
  field_times: Record<string, string>;
  event_time: Date;
  ingested_at: Date;
  provider_version: string | null;
  origin: Record<string, unknown> | null;
}

export function toLogEvent(row: LogEventRow): LogEvent {
  return {
    partition: row.partition,
    offset: Number(row.offset),
    workspaceId: row.workspace_id,
    connectionId: row.connection_id,
    eventKey: row.event_key,
    entityType: row.entity_type,
    externalId: row.external_id,
    op: row.op,
    fields: row.fields,
    fieldTimes: row.field_times,
    eventTime: row.event_time,
    ingestedAt: row.ingested_at,
    providerVersion: row.provider_version,
    origin: row.origin,
  };
}
