-- The log is partitioned by workspace: every change of a workspace on one partition, so the
-- log's order is the only order its records are folded in (libs/log/src/partitioner.ts says
-- why). Existing events move from the per-record key to the workspace's partition here.
--
-- Order in the new partition: first every event the `sync` group had folded, then the rest;
-- each part in the order the events came (per old partition a running maximum of when they
-- came, so each old partition, and so each record, keeps its order), ties by old position.
-- The folded events are thus a prefix of each new partition and the group's new offset is its
-- length: nothing folded is folded again and nothing unfolded is skipped. Another group keeps
-- the longest prefix it had consumed (it may consume again what lies beyond that prefix).
-- The journal of batches (consumer_batch) names old positions: it is emptied. It is kept for
-- what it tells of the consumer's batches from now on (bench e2e-latency-hops); a replay no
-- longer reads it, the log's order being the order it folds in.

-- Appenders and consumers of the old code wait until this commits (stop them first).
LOCK TABLE log_partition, change_event, consumer_offset, consumer_batch IN EXCLUSIVE MODE;

-- 32-bit FNV-1a over the id's characters (a uuid: ASCII), as partitionFor computes it.
CREATE FUNCTION syncline_log_partition(workspace_id text, partitions int) RETURNS int
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  h bigint := 2166136261;
BEGIN
  FOR i IN 1..length(workspace_id) LOOP
    h := (h # ascii(substr(workspace_id, i, 1))) * 16777619 & 4294967295;
  END LOOP;
  RETURN (h % partitions)::int;
END
$$;

CREATE TEMP TABLE log_move ON COMMIT DROP AS
SELECT e.partition AS old_partition, e."offset" AS old_offset,
       syncline_log_partition(e.workspace_id::text, (SELECT count(*)::int FROM log_partition)) AS new_partition,
       e."offset" <= coalesce(o.committed_offset, 0) AS folded,
       max(e.ingested_at) OVER (PARTITION BY e.partition ORDER BY e."offset") AS came
  FROM change_event e
  LEFT JOIN consumer_offset o ON o.group_name = 'sync' AND o.partition = e.partition;

ALTER TABLE log_move ADD COLUMN new_offset bigint;
UPDATE log_move m SET new_offset = r.n
  FROM (SELECT old_partition, old_offset,
               row_number() OVER (PARTITION BY new_partition
                                  ORDER BY folded DESC, came, old_partition, old_offset) AS n
          FROM log_move) r
 WHERE r.old_partition = m.old_partition AND r.old_offset = m.old_offset;
CREATE UNIQUE INDEX ON log_move (old_partition, old_offset);

-- Per group and new partition, the longest prefix the group had consumed.
CREATE TEMP TABLE group_move ON COMMIT DROP AS
SELECT g.group_name, p.partition,
       coalesce(
         (SELECT min(m.new_offset) - 1 FROM log_move m
            LEFT JOIN consumer_offset o ON o.group_name = g.group_name AND o.partition = m.old_partition
           WHERE m.new_partition = p.partition AND m.old_offset > coalesce(o.committed_offset, 0)),
         (SELECT max(m.new_offset) FROM log_move m WHERE m.new_partition = p.partition),
         0) AS committed
  FROM (SELECT DISTINCT group_name FROM consumer_offset) g
 CROSS JOIN log_partition p;

-- Two steps, so no row takes a key another still holds: through negative partitions, back.
UPDATE change_event e SET partition = -1 - m.new_partition, "offset" = m.new_offset
  FROM log_move m WHERE m.old_partition = e.partition AND m.old_offset = e."offset";
UPDATE change_event SET partition = -1 - partition WHERE partition < 0;

-- A dead letter names the event's new place, or none if retention deleted the event: those
-- first, so that no letter moves onto a place another still holds (the same two steps).
UPDATE dead_letter d SET partition = NULL, "offset" = NULL
 WHERE d.source = 'log' AND d.partition IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM log_move m WHERE m.old_partition = d.partition AND m.old_offset = d."offset");
UPDATE dead_letter d SET partition = -1 - m.new_partition, "offset" = m.new_offset
  FROM log_move m
 WHERE d.source = 'log' AND m.old_partition = d.partition AND m.old_offset = d."offset";
UPDATE dead_letter SET partition = -1 - partition WHERE source = 'log' AND partition < 0;

UPDATE log_partition h
   SET next_offset = coalesce((SELECT max(m.new_offset) + 1 FROM log_move m WHERE m.new_partition = h.partition), 1);

UPDATE consumer_offset o SET committed_offset = g.committed, updated_at = now()
  FROM group_move g WHERE g.group_name = o.group_name AND g.partition = o.partition;
INSERT INTO consumer_offset (group_name, partition, committed_offset)
SELECT g.group_name, g.partition, g.committed FROM group_move g
ON CONFLICT (group_name, partition) DO NOTHING;

DELETE FROM consumer_batch;
