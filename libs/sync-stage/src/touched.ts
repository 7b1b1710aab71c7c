import type { MergeOutcome } from '@syncline/conflicts';
import type { EntityType } from '@syncline/core';

/** An entity a batch moved: what its merge came to, and what else the batch did to it. */
export interface Touched {
  entityId: string;
  workspaceId: string;
  entityType: EntityType;
  outcome?: MergeOutcome;
  /** Connections whose record of this entity was deleted by this batch. */
  deletedIn: { connectionId: string; at: string }[];
  /** Merged into another entity: its view is saved, nothing is written back from it. */
  frozen?: boolean;
}

/** The batch's entry of an entity, made on first touch. */
export function touchedEntry(
  touched: Map<string, Touched>,
  ref: { entityId: string; workspaceId: string; entityType: EntityType },
): Touched {
  let entry = touched.get(ref.entityId);
  if (entry === undefined) {
    entry = { ...ref, deletedIn: [] };
    touched.set(ref.entityId, entry);
  }
  return entry;
}
