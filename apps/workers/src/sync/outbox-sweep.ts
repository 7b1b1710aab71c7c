import type { Logger, ProviderKey } from '@syncline/core';
import { oweReconciledAssociations, queueReconcileCreates } from '@syncline/sync-stage';
import type { Pool } from 'pg';
import { SYNC_GROUP } from './sync-group';

/**
 * The outbox's upkeep, run by the `outbox.sweep` job every few seconds: what no push was asked
 * for, or a lost one was, is pushed again, and a connection that finished its backfill is
 * queued the records it lacks. Pushes go through `schedule` (PushService.schedule).
 */
export class OutboxSweep {
  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    private readonly schedule: (connectionId: string) => Promise<void>,
  ) {}

  /**
   * A connection that finished its backfill, once the sync stage has linked every record of
   * it, is owed the records it lacks (people, companies and deals only from another CRM;
   * see writeback-rules). Done once per connection; creates are keyed per (entity, target),
   * so running it twice never makes a second record.
   */
  async reconcile(): Promise<number> {
    const { rows: due } = await this.pool.query<{ id: string; workspace_id: string; provider: ProviderKey }>(
      // Again for a minute after the first time: batches in flight then (and workers whose
      // connection list was cached from before) did not yet create in this connection. A
      // connection in dry run is written nothing: its creates wait for the enable.
      `SELECT c.id, c.workspace_id, c.provider::text AS provider FROM connection c
        WHERE c.status = 'live' AND c.provider <> 'syncline' AND NOT c.dry_run AND (c.reconciled_at > now() - interval '60 seconds' OR c.reconciled_at IS NULL AND NOT EXISTS (
            SELECT 1 FROM change_event ev
              LEFT JOIN consumer_offset o ON o.group_name = $1 AND o.partition = ev.partition
             WHERE ev.connection_id = c.id AND ev."offset" > COALESCE(o.committed_offset, 0)))`,
      [SYNC_GROUP],
    );
    let queued = 0;
    for (const connection of due) {
      const rowCount = await queueReconcileCreates(this.pool, connection);
      const { rowCount: first } = await this.pool.query(
        'UPDATE connection SET reconciled_at = now() WHERE id = $1 AND reconciled_at IS NULL',
        [connection.id],
      );
      // The first time: the associations the other CRMs make between records it holds too.
      if (connection.provider === 'hubspot' && (first ?? 0) > 0)
        for (const id of await oweReconciledAssociations(this.pool, connection.workspace_id))
          await this.schedule(id);
      queued += rowCount;
      if (rowCount > 0) await this.schedule(connection.id);
      if (rowCount > 0)
        this.logger.info(
          { connectionId: connection.id, creates: rowCount },
          'records this connection lacked queued',
        );
    }
    return queued;
  }

  /** Connections with rows pending (or claimed by a pusher that died): push them again. */
  async sweep(): Promise<number> {
    await this.reconcile();
    // Associations waiting for an end whose record has been linked since by another way than our
    // create (its echo, a report of the connection's own record): owed now.
    await this.pool.query(
      `UPDATE outbox o SET status = 'pending', claimed_at = NULL
        WHERE o.status = 'waiting'
          AND o.connection_id IN (SELECT id FROM connection WHERE status IN ('live', 'backfilling'))
          AND EXISTS (SELECT 1 FROM source_link l WHERE l.connection_id = o.connection_id AND l.entity_id = o.entity_id)
          AND EXISTS (SELECT 1 FROM source_link l WHERE l.connection_id = o.connection_id
                         AND l.entity_id::text = o.fields->>'toId')`,
    );
    const { rows } = await this.pool.query<{ connection_id: string }>(
      `SELECT DISTINCT o.connection_id FROM outbox o JOIN connection c ON c.id = o.connection_id
        WHERE c.status IN ('live', 'backfilling')
          AND (o.status = 'pending' AND (o.not_before IS NULL OR o.not_before <= now())
               OR (o.status = 'sending' AND o.claimed_at < now() - interval '30 seconds'))`,
    );
    for (const row of rows) await this.schedule(row.connection_id);
    return rows.length;
  }
}
