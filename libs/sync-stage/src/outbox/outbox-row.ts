import type { EntityType } from '@syncline/core';

/** A write owed to one connection: a row of the outbox, as the sync stage queues it. */
export interface OutboxRow {
  workspace_id: string;
  entity_id: string;
  entity_type: EntityType;
  connection_id: string;
  /** `merge`: the provider's own merge of `fields.mergedExternalId` into `external_id`. */
  op: 'create' | 'update' | 'delete' | 'merge';
  external_id: string | null;
  fields: Record<string, unknown>;
  /** What the target held of these fields when the row was written (never-held fields absent). */
  prior: Record<string, unknown>;
  heads: string[];
  idempotency_key: string;
}

/** An outbox row as the push job claims it: of the claiming connection, with its id. */
export type ClaimedOutboxRow = Omit<OutboxRow, 'connection_id'> & {
  id: string;
  /** A create of an entity whose own record this target merged away at our asking (see PushWrite). */
  after_provider_merge?: boolean;
  /** Times the row was claimed, this claim included: a claim on the log is keyed by it. */
  attempts?: number;
};
