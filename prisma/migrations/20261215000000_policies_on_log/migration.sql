-- Field policies go on the change log. A replacement of a type's set (PUT /api/v1/policies/{type})
-- appends a `policy` event to the workspace's partition in the transaction that saves it; the
-- sync stage folds it into policy_in_force, and the merge reads that table, so every change is
-- merged under the policies in force at its place on the log (live or in a fold from zero),
-- not under whatever a process had cached when it came.
--
-- The sets saved before this migration are in force now: they are copied in, and each is
-- appended to the log as a `policy` event (after the history it did not see), so a fold of
-- the log from zero ends with them too.

LOCK TABLE log_partition, change_event IN EXCLUSIVE MODE;

CREATE TABLE "policy_in_force" (
    "workspace_id" UUID NOT NULL,
    "entity_type" TEXT NOT NULL,
    -- field → { kind, order? }, lww fields left out: the set of the last `policy` event folded.
    "policies" JSONB NOT NULL,
    -- That event's version of the set (field_policy_revision.version).
    "version" INTEGER NOT NULL,

    -- No foreign key, as the merge's other tables (field_policy, merge_conflict) have none.
    CONSTRAINT "policy_in_force_pkey" PRIMARY KEY ("workspace_id", "entity_type")
);

CREATE TEMP TABLE saved_sets ON COMMIT DROP AS
SELECT r.workspace_id, r.entity_type, r.version, r.policies
  FROM field_policy_revision r
 WHERE r.version = (SELECT max(version) FROM field_policy_revision x
                     WHERE x.workspace_id = r.workspace_id AND x.entity_type = r.entity_type)
UNION ALL
-- Rows written without a revision (none through the API): version 0.
SELECT p.workspace_id, p.entity_type, 0,
       jsonb_object_agg(p.field, CASE WHEN p.policy = 'priority'
                                      THEN jsonb_build_object('kind', p.policy, 'order', p.priority)
                                      ELSE jsonb_build_object('kind', p.policy) END)
  FROM field_policy p
 WHERE NOT EXISTS (SELECT 1 FROM field_policy_revision x
                    WHERE x.workspace_id = p.workspace_id AND x.entity_type = p.entity_type)
 GROUP BY p.workspace_id, p.entity_type;

INSERT INTO policy_in_force (workspace_id, entity_type, policies, version)
SELECT workspace_id, entity_type, policies, version FROM saved_sets;

-- The workspace's own connection carries its policy events, as it carries its edits.
INSERT INTO connection (id, workspace_id, provider, external_account_id, display_name, status, reconciled_at)
SELECT gen_random_uuid(), s.workspace_id, 'syncline'::provider, 'syncline', 'Edits made in Syncline', 'live', now()
  FROM (SELECT DISTINCT workspace_id FROM saved_sets) s
ON CONFLICT (workspace_id, provider, external_account_id) DO NOTHING;

CREATE TEMP TABLE policy_events ON COMMIT DROP AS
SELECT syncline_log_partition(s.workspace_id::text, (SELECT count(*)::int FROM log_partition)) AS partition,
       s.workspace_id, c.id AS connection_id, s.entity_type, s.version, s.policies,
       row_number() OVER (PARTITION BY syncline_log_partition(s.workspace_id::text,
                                         (SELECT count(*)::int FROM log_partition))
                          ORDER BY s.workspace_id, s.entity_type) AS rank
  FROM saved_sets s
  JOIN connection c ON c.workspace_id = s.workspace_id AND c.provider = 'syncline'
                   AND c.external_account_id = 'syncline'
 -- A database whose log was never opened has no partitions yet: nothing to append to.
 WHERE (SELECT count(*) FROM log_partition) > 0;

INSERT INTO change_event (partition, "offset", workspace_id, connection_id, event_key, entity_type, external_id,
                          op, fields, field_times, event_time)
SELECT e.partition, p.next_offset + e.rank - 1, e.workspace_id, e.connection_id,
       'policy:' || e.entity_type || ':' || e.version, e.entity_type, 'policies', 'policy',
       json_build_object('version', e.version, 'policies', e.policies), '{}'::json, now()
  FROM policy_events e JOIN log_partition p USING (partition)
ON CONFLICT (connection_id, event_key) DO NOTHING;

UPDATE log_partition p SET next_offset = p.next_offset + n.n
  FROM (SELECT partition, count(*) AS n FROM policy_events GROUP BY partition) n
 WHERE p.partition = n.partition;
