/**
 * The tables derived from the change log: the sync stage's fold of it, so replaying the log
 * through the stage rebuilds them. One list, read by the dry run (which copies them into its
 * sandbox), the replay (which rebuilds them) and a disconnect (which removes a connection's
 * rows from them). A table the sync stage writes that is missing here is caught by
 * derived-tables.spec.ts.
 */

/** The package whose code writes the table (`@syncline/sync-stage` composes the others). */
export type DerivedTableOwner = '@syncline/identity' | '@syncline/conflicts' | '@syncline/sync-stage';

/**
 * What a disconnect does with a connection's rows of the table (those whose
 * `connection_id` is the connection's): `delete` them, delete them only when its data is
 * erased (`erase`), or set its pending writes aside (`supersede`).
 */
export type OnDisconnect = 'delete' | 'erase' | 'supersede';

export interface DerivedTable {
  readonly table: string;
  readonly owner: DerivedTableOwner;
  /** The workspace's rows: an SQL condition on the table with $1 the workspace id; `real` names another table. */
  readonly workspaceRows: (real: (table: string) => string) => string;
  /** Rows of one connection (they have a `connection_id`): what a disconnect does with them. */
  readonly connectionRows?: OnDisconnect;
  /** The columns naming entities; an erase deletes the rows of the entities it deletes. */
  readonly entityColumns?: readonly string[];
  /** Its rows go with their entity (a cascading foreign key): an erase need not delete them itself. */
  readonly cascadesFromEntity?: boolean;
}

const inWorkspace = () => 'workspace_id = $1';

export const DERIVED_TABLES: readonly DerivedTable[] = [
  { table: 'entity', owner: '@syncline/identity', workspaceRows: inWorkspace, entityColumns: ['id'] },
  {
    table: 'source_link',
    owner: '@syncline/identity',
    workspaceRows: inWorkspace,
    connectionRows: 'delete',
    entityColumns: ['entity_id'],
    cascadesFromEntity: true,
  },
  {
    table: 'match_key',
    owner: '@syncline/identity',
    workspaceRows: inWorkspace,
    entityColumns: ['entity_id'],
    cascadesFromEntity: true,
  },
  {
    table: 'possible_duplicate',
    owner: '@syncline/identity',
    workspaceRows: inWorkspace,
    entityColumns: ['entity_a', 'entity_b'],
    cascadesFromEntity: true,
  },
  // The merge history stays after an erase: it names entities, it does not hang off them.
  { table: 'identity_operation', owner: '@syncline/identity', workspaceRows: inWorkspace },
  // Before entity_doc: its rows are found through the document's.
  {
    table: 'entity_doc_change',
    owner: '@syncline/conflicts',
    workspaceRows: (real) =>
      `entity_id IN (SELECT entity_id FROM ${real('entity_doc')} WHERE workspace_id = $1)`,
    entityColumns: ['entity_id'],
  },
  {
    table: 'entity_doc',
    owner: '@syncline/conflicts',
    workspaceRows: inWorkspace,
    entityColumns: ['entity_id'],
  },
  {
    table: 'entity_synced_heads',
    owner: '@syncline/conflicts',
    workspaceRows: (real) => `entity_id IN (SELECT id FROM ${real('entity')} WHERE workspace_id = $1)`,
    connectionRows: 'delete',
    entityColumns: ['entity_id'],
  },
  {
    table: 'merge_conflict',
    owner: '@syncline/conflicts',
    workspaceRows: inWorkspace,
    entityColumns: ['entity_id'],
  },
  // The field policies in force: folded from `policy` events; a disconnect leaves them.
  { table: 'policy_in_force', owner: '@syncline/conflicts', workspaceRows: inWorkspace },
  {
    table: 'entity_association',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    entityColumns: ['activity_id'],
    cascadesFromEntity: true,
  },
  {
    table: 'entity_relation',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    connectionRows: 'erase',
    entityColumns: ['from_id', 'to_id'],
    cascadesFromEntity: true,
  },
  {
    table: 'relation_mirror',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    connectionRows: 'delete',
    entityColumns: ['from_id', 'to_id'],
  },
  {
    table: 'outbox',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    connectionRows: 'supersede',
    entityColumns: ['entity_id'],
  },
  {
    table: 'write_receipt',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    connectionRows: 'delete',
    entityColumns: ['entity_id'],
  },
  {
    table: 'write_claim',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    connectionRows: 'delete',
    entityColumns: ['entity_id'],
  },
  // Activity insights (sync-stage insights/): what each activity counts for, the windows' state,
  // results and side output. A disconnect leaves them, as it leaves the associations; the
  // connection's watermark stops holding the workspace's at the stage's next batch.
  {
    table: 'activity_contribution',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    entityColumns: ['activity_id', 'entity_id'],
  },
  { table: 'insights_state', owner: '@syncline/sync-stage', workspaceRows: inWorkspace },
  {
    table: 'insight_pane',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    entityColumns: ['entity_id'],
  },
  {
    table: 'entity_insight',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    entityColumns: ['entity_id'],
  },
  {
    table: 'insights_side_output',
    owner: '@syncline/sync-stage',
    workspaceRows: inWorkspace,
    entityColumns: ['activity_id', 'entity_id'],
  },
];

export const DERIVED_TABLE_NAMES: readonly string[] = DERIVED_TABLES.map((t) => t.table);
