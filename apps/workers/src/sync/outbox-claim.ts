import {
  type AssociationOp,
  type ClaimedOutboxRow,
  INSIGHT_WRITE_PERIOD_MS,
  receiptEventKeySql,
} from '@syncline/sync-stage';
import type { Pool } from 'pg';
import { SYNC_GROUP } from './sync-group';

/**
 * A claimed row: an entity write, an association between two entities (relation-writeback.ts),
 * or the insight properties of a record (`insights`, entity-insights.ts).
 */
export type ClaimedRow = Omit<ClaimedOutboxRow, 'op'> & {
  op: ClaimedOutboxRow['op'] | AssociationOp | 'insights';
};

/** The rows a pusher took, with what it needs to send them. */
export interface Claim {
  /** Claimed rows (status `sending`), in id order. */
  rows: ClaimedRow[];
  /** The target's external id per entity (its link in this connection). */
  linked: Map<string, string>;
  /** The target record's version as last merged, per entity: writes are conditional on it. */
  versions: Map<string, string | null>;
  /** Rows set aside as out of date instead of claimed. */
  outdated: number;
}

/**
 * Claims the next rows together with each record's link (external id, last seen version)
 * and the entity's heads, read in the same statement and so the same snapshot, in which the
 * sync stage's merges are all or nothing (heads, link version and outbox rows commit
 * together). An update row computed at other heads than the entity's is out of date: the
 * merge that moved the heads wrote what the target is owed now, so the row is set aside
 * instead of sent. A merge the snapshot does not see yet left the link's older version, and
 * a write conditional on it is refused. Checking the heads anywhere else races the merge: a
 * row a pusher held while a merge of its target's own report committed (the merge sets only
 * pending rows aside) would be sent at the version that merge recorded, over the report's
 * values, which under `manual` overwrites one side of an open conflict.
 */
export async function claimOutbox(
  pool: Pool,
  connectionId: string,
  limit: number,
  insightPeriodMs = INSIGHT_WRITE_PERIOD_MS,
  /** The last row id this claim may take (the outbox as the push found it); none: every row. */
  upTo = '9223372036854775807',
): Promise<Claim> {
  const { rows } = await pool.query<
    ClaimedRow & { link_external_id: string | null; link_version: string | null; outdated: boolean }
  >({
    // Named: planned once per pooled connection (withGenericPlans), not at every claim.
    name: 'outbox.claim',
    text: `WITH candidate AS (
       SELECT o.id, (o.op = 'update' AND o.heads IS DISTINCT FROM e.heads) AS outdated
         FROM outbox o LEFT JOIN entity e ON e.id = o.entity_id
        WHERE o.connection_id = $1 AND o.status IN ('pending', 'sending') AND o.id <= $5::bigint
          -- A write the provider refused as stale waits for its record's fresh version to be
          -- merged, a second longer after each refusal (setAside stamps claimed_at): taken again
          -- by every push of the connection meanwhile, it would use up its attempts before the
          -- sync stage, however far behind, could merge what the provider holds.
          AND NOT (o.status = 'pending' AND o.claimed_at IS NOT NULL
                   AND o.claimed_at > now() - LEAST(o.attempts, 30) * interval '1 second')
          AND (o.not_before IS NULL OR o.not_before <= now())
          -- A record's insight properties go at most once per period: not while the last write
          -- of them, sent or on its way, is younger than that (queueInsightWrites).
          AND NOT (o.op = 'insights' AND EXISTS (
                SELECT 1 FROM outbox s
                 WHERE s.entity_id = o.entity_id AND s.connection_id = o.connection_id AND s.op = 'insights'
                   AND s.id <> o.id AND s.status IN ('sent', 'sending')
                   AND COALESCE(s.sent_at, s.claimed_at) > now() - make_interval(secs => $4::double precision / 1000)))
        ORDER BY o.id LIMIT $2 FOR UPDATE OF o SKIP LOCKED),
     outdated AS (
       UPDATE outbox o SET status = 'superseded', claimed_at = NULL
        WHERE o.id IN (SELECT id FROM candidate WHERE outdated)
       RETURNING o.id),
     claimed AS (
       UPDATE outbox o SET status = 'sending', claimed_at = now(), attempts = o.attempts + 1
        WHERE o.id IN (SELECT id FROM candidate WHERE NOT outdated)
          -- A connection paused or disconnected while this push drains stops at its next claim.
          AND EXISTS (SELECT 1 FROM connection c WHERE c.id = $1 AND c.status IN ('live', 'backfilling'))
       RETURNING o.id, o.workspace_id, o.entity_id, o.entity_type, o.op, o.external_id,
                 o.fields, o.prior, o.heads, o.idempotency_key, o.attempts)
     SELECT c.id::text AS id, c.workspace_id, c.entity_id, c.entity_type, c.op, c.external_id, c.fields,
            c.prior, c.heads, c.idempotency_key, c.attempts, l.external_id AS link_external_id,
            COALESCE(CASE WHEN last_sent."offset" > COALESCE(co.committed_offset, -1) THEN last_sent.provider_version END,
                     l.provider_version) AS link_version,
            -- This target merged the entity's own record away at our asking (an unmerge since).
            c.op = 'create' AND COALESCE((SELECT e.flags->'recreateIn' ? $1::uuid::text FROM entity e
                                           WHERE e.id = c.entity_id), false) AS after_provider_merge,
            false AS outdated
       FROM claimed c LEFT JOIN source_link l ON l.connection_id = $1 AND l.entity_id = c.entity_id
       -- The version our last write to the record left, while its receipt waits on the log for
       -- the sync stage (which moves it onto the link): the record holds what we wrote, so the
       -- next write is conditional on that version, not on the one before it (refused as stale).
       -- Only the last receipt can be waiting: one pusher at a time sends a connection's writes
       -- and logs their receipts on the workspace's partition before it marks them sent, so a
       -- later write's receipt has a later offset, and once the stage has folded the last one it
       -- has folded every one before it. The read walks the record's sent writes newest first
       -- (outbox_sent_entity_idx) and stops at the first with a receipt, not at every write the
       -- record ever had.
       LEFT JOIN LATERAL (
         SELECT ev.provider_version, ev.partition, ev."offset" FROM outbox s
           JOIN change_event ev ON ev.connection_id = s.connection_id
                               AND ev.event_key = ${receiptEventKeySql('s.connection_id', 's.idempotency_key')}
          WHERE s.entity_id = c.entity_id AND s.connection_id = $1 AND s.status = 'sent'
            AND s.op IN ('create', 'update', 'merge') AND ev.external_id = l.external_id
            AND ev.provider_version IS NOT NULL
          ORDER BY s.sent_at DESC NULLS LAST, s.id DESC LIMIT 1) last_sent ON true
       LEFT JOIN consumer_offset co ON co.group_name = $3 AND co.partition = last_sent.partition
     UNION ALL
     SELECT id::text, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true FROM outdated`,
    values: [connectionId, limit, SYNC_GROUP, insightPeriodMs, upTo],
  });
  const outdated = rows.filter((r) => r.outdated).length;
  const linked = new Map<string, string>();
  const versions = new Map<string, string | null>();
  const current = rows.filter((r) => !r.outdated);
  for (const r of current) {
    if (r.link_external_id === null) continue;
    // Two records of the entity here: the first by external id, as the sync stage writes it.
    const taken = linked.get(r.entity_id);
    if (taken !== undefined && taken <= r.link_external_id) continue;
    linked.set(r.entity_id, r.link_external_id);
    versions.set(r.entity_id, r.link_version);
  }
  // An entity with two records in one connection joins twice: one row each.
  const claimed = [
    ...new Map(
      current.map(({ link_external_id: _id, link_version: _v, outdated: _o, ...row }) => [row.id, row]),
    ).values(),
  ];
  return {
    rows: claimed.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)),
    linked,
    versions,
    outdated,
  };
}
