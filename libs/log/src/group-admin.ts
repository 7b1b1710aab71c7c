import type { Pool } from 'pg';
import { groupLockKey } from './advisory-keys';

export type ResetTarget = { offset: number } | { eventTime: Date } | 'beginning';

export class GroupBusyError extends Error {
  override name = 'GroupBusyError';
}

/**
 * Moves a group's committed offsets back (or forward) for replay. `eventTime` restarts
 * each partition at its first event whose event time is at or after the given time, so
 * late events appended after it are replayed too. Refuses while any member of the group
 * holds a partition: stop the group first.
 */
export async function resetGroup(
  pool: Pool,
  group: string,
  partitions: number,
  target: ResetTarget,
): Promise<{ partition: number; committedOffset: number }[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const key = groupLockKey(group);
    for (let p = 0; p < partitions; p++) {
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS ok', [
        key,
        p,
      ]);
      if (!rows[0]?.ok)
        throw new GroupBusyError(
          `consumer group ${group} is running (partition ${p} is leased); stop it before a reset`,
        );
    }
    await client.query(
      `INSERT INTO consumer_offset (group_name, partition)
       SELECT $1, p FROM generate_series(0, $2::int - 1) AS p ON CONFLICT DO NOTHING`,
      [group, partitions],
    );
    let sql: string;
    let params: unknown[];
    if (target === 'beginning') {
      sql = `UPDATE consumer_offset SET committed_offset = 0, updated_at = now() WHERE group_name = $1`;
      params = [group];
    } else if ('offset' in target) {
      sql = `UPDATE consumer_offset SET committed_offset = $2, updated_at = now() WHERE group_name = $1`;
      params = [group, target.offset];
    } else {
      sql = `UPDATE consumer_offset o
                SET committed_offset = COALESCE(
                      (SELECT min(e."offset") - 1 FROM change_event e
                        WHERE e.partition = o.partition AND e.event_time >= $2),
                      (SELECT next_offset - 1 FROM log_partition h WHERE h.partition = o.partition),
                      0),
                    updated_at = now()
              WHERE group_name = $1`;
      params = [group, target.eventTime];
    }
    await client.query(sql, params);
    // Batches past the new position will be handled (and journaled) again.
    await client.query(
      `DELETE FROM consumer_batch b USING consumer_offset o
        WHERE b.group_name = $1 AND o.group_name = $1 AND o.partition = b.partition
          AND b.last_offset > o.committed_offset`,
      [group],
    );
    const { rows } = await client.query<{ partition: number; committed_offset: string }>(
      'SELECT partition, committed_offset FROM consumer_offset WHERE group_name = $1 ORDER BY partition',
      [group],
    );
    await client.query('COMMIT');
    return rows.map((r) => ({ partition: r.partition, committedOffset: Number(r.committed_offset) }));
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

export interface PartitionLag {
  partition: number;
  committedOffset: number;
  /** The last offset present in the partition (0 when empty). */
  headOffset: number;
  /** Offsets between the committed one and the head; redeliveries can leave gaps, so an upper bound of unread events, and 0 exactly when the group is caught up. */
  lag: number;
}

/**
 * Offset lag of a group per partition. The head is the last offset present, not the next
 * one to be given: a dropped redelivery uses up a number that never appears.
 */
export async function groupLag(pool: Pool, group: string): Promise<PartitionLag[]> {
  const { rows } = await pool.query<{ partition: number; committed: string; head: string }>(
    `SELECT h.partition, COALESCE(o.committed_offset, 0) AS committed,
            COALESCE((SELECT max(e."offset") FROM change_event e WHERE e.partition = h.partition), 0) AS head
       FROM log_partition h
       LEFT JOIN consumer_offset o ON o.partition = h.partition AND o.group_name = $1
      ORDER BY h.partition`,
    [group],
  );
  return rows.map((r) => ({
    partition: r.partition,
    committedOffset: Number(r.committed),
    headOffset: Number(r.head),
    lag: Math.max(0, Number(r.head) - Number(r.committed)),
  }));
}

export interface RetentionResult {
  deleted: number;
  /** Events past the retention age kept because some group has not consumed them yet. */
  heldBackByGroups: number;
}

/**
 * Deletes events older than the retention that every consumer group has committed past.
 * A lagging group keeps its unread events, whatever their age. Deletes in chunks so a
 * large cleanup never holds one long transaction.
 */
export async function enforceRetention(
  pool: Pool,
  options: { retentionMs: number; now?: Date; chunk?: number },
): Promise<RetentionResult> {
  const cutoff = new Date((options.now ?? new Date()).getTime() - options.retentionMs);
  const chunk = options.chunk ?? 5000;
  let deleted = 0;
  for (;;) {
    const res = await pool.query(
      `WITH floor AS (
         SELECT h.partition,
                COALESCE((SELECT min(o.committed_offset) FROM consumer_offset o WHERE o.partition = h.partition),
                         h.next_offset - 1) AS safe
           FROM log_partition h
       ),
       doomed AS (
         SELECT e.partition, e."offset" FROM change_event e JOIN floor f ON f.partition = e.partition
          WHERE e.ingested_at < $1 AND e."offset" <= f.safe
          LIMIT $2
       )
       DELETE FROM change_event e USING doomed d WHERE e.partition = d.partition AND e."offset" = d."offset"`,
      [cutoff, chunk],
    );
    deleted += res.rowCount ?? 0;
    if ((res.rowCount ?? 0) < chunk) break;
  }
  // The journal of batches before each partition's oldest event left: nothing is left to
  // replay in that order. (Retention deletes a partition's oldest events; one lookup per
  // partition, not one per journal row.)
  await pool.query(
    `WITH floor AS (
       SELECT h.partition, (SELECT min(e."offset") FROM change_event e WHERE e.partition = h.partition) AS first
         FROM log_partition h)
     DELETE FROM consumer_batch b USING floor f
      WHERE b.partition = f.partition AND (f.first IS NULL OR b.last_offset < f.first)`,
  );
  const held = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM change_event WHERE ingested_at < $1',
    [cutoff],
  );
  return { deleted, heldBackByGroups: held.rows[0]?.n ?? 0 };
}
