import type { InsightValues } from '@syncline/connectors';
import type { Queryable } from '@syncline/core';
import { EMPTY_METRICS, type InsightMetrics } from '@syncline/insights';
import type { TargetConnection } from '../connections';
import { CONNECTORS } from '../writeback-rules';

/**
 * How often at most a record's insight properties are written to one connection (the early
 * trigger's period): a busy inbox revises a person's results every batch, and the CRM's rate
 * budget is for the records themselves.
 */
export const INSIGHT_WRITE_PERIOD_MS = 30_000;

/** The values of the CRM properties Syncline owns for one record. */
export type CrmInsightValues = InsightValues;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * What a CRM is told of a record: its current result and next meeting. How complete the result
 * is (the watermark) is left out on purpose: it moves every few minutes for every record, and
 * would make every record owe a write each time.
 */
export function crmValuesOf(metrics: InsightMetrics, nextMeetingAt: Date | null): CrmInsightValues {
  return {
    lastContactedAt: iso(metrics.lastContactedAt),
    lastContactedVia: metrics.lastContactedVia,
    nextMeetingAt: nextMeetingAt === null ? null : nextMeetingAt.toISOString(),
    mailsIn30: metrics.last30.mailsIn,
    mailsOut30: metrics.last30.mailsOut,
    meetings30: metrics.last30.meetings,
    engagement7: metrics.last7.mailsIn + metrics.last7.mailsOut + metrics.last7.meetings,
    engagement90: metrics.last90.mailsIn + metrics.last90.mailsOut + metrics.last90.meetings,
    trend: metrics.trend,
  };
}

/** Whether a connection's provider holds the insight properties (a CRM whose connector writes them). */
export const holdsInsights = (target: Pick<TargetConnection, 'provider'>): boolean =>
  typeof (CONNECTORS[target.provider] as { pushInsights?: unknown }).pushInsights === 'function';

/** Canonical JSON of flat values: equal values, equal text, whatever the key order. */
const canonical = (values: Readonly<Record<string, unknown>>): string =>
  JSON.stringify(
    Object.entries(values)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, v ?? null]),
  );

/**
 * Brings `entity_insight` up to date for these records of a workspace: each one's latest pane
 * and next meeting after `now` (the log's time: a fold of the log computes the same). A record
 * whose results went (its activities deleted) keeps a row of empty results, so the CRMs that
 * were told something are told it is gone; a merged-away record's row goes. Returns the
 * records whose CRM values changed.
 */
export async function refreshEntityInsights(
  tx: Queryable,
  workspaceId: string,
  ids: readonly string[],
  now: number,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const sorted = [...new Set(ids)].sort();
  const { rows } = await tx.query<{
    id: string;
    entity_type: string;
    merged: boolean;
    metrics: InsightMetrics | null;
    next_meeting_at: Date | null;
    crm: Record<string, unknown> | null;
  }>(
    `SELECT e.id, e.entity_type, e.merged_into IS NOT NULL AS merged, p.metrics, n.at AS next_meeting_at, i.crm
       FROM entity e
       LEFT JOIN LATERAL (SELECT metrics FROM insight_pane
                           WHERE entity_id = e.id ORDER BY window_end DESC LIMIT 1) p ON true
       LEFT JOIN LATERAL (SELECT min(event_time) AS at FROM activity_contribution
                           WHERE workspace_id = $1 AND entity_id = e.id AND kind = 'meeting'
                             AND event_time > $3) n ON true
       LEFT JOIN entity_insight i ON i.entity_id = e.id
      WHERE e.workspace_id = $1 AND e.id = ANY($2::uuid[]) AND e.entity_type IN ('person', 'company', 'deal')
      ORDER BY e.id`,
    [workspaceId, sorted, new Date(now)],
  );
  const gone = rows.filter((r) => r.merged && r.crm !== null).map((r) => r.id);
  if (gone.length > 0) await tx.query('DELETE FROM entity_insight WHERE entity_id = ANY($1::uuid[])', [gone]);
  const changed: { row: (typeof rows)[number]; metrics: InsightMetrics; values: CrmInsightValues }[] = [];
  for (const row of rows) {
    if (row.merged) continue;
    // Nothing to tell and nothing told: no row.
    if (row.metrics === null && row.next_meeting_at === null && row.crm === null) continue;
    const metrics = row.metrics ?? EMPTY_METRICS;
    const values = crmValuesOf(metrics, row.next_meeting_at);
    if (row.crm !== null && canonical(row.crm) === canonical({ ...values })) continue;
    changed.push({ row, metrics, values });
  }
  if (changed.length === 0) return [];
  await tx.query(
    `INSERT INTO entity_insight (entity_id, workspace_id, entity_type, last_contacted_at, last_contacted_via,
                                 next_meeting_at, trend, engagement_30, crm)
     SELECT r.entity_id, $2, r.entity_type, r.last_contacted_at, r.last_contacted_via, r.next_meeting_at, r.trend,
            r.engagement_30, r.crm
       FROM jsonb_to_recordset($1::jsonb) AS r(entity_id uuid, entity_type text, last_contacted_at timestamptz,
            last_contacted_via text, next_meeting_at timestamptz, trend text, engagement_30 int, crm jsonb)
     ON CONFLICT (entity_id) DO UPDATE
        SET last_contacted_at = EXCLUDED.last_contacted_at, last_contacted_via = EXCLUDED.last_contacted_via,
            next_meeting_at = EXCLUDED.next_meeting_at, trend = EXCLUDED.trend,
            engagement_30 = EXCLUDED.engagement_30, crm = EXCLUDED.crm`,
    [
      JSON.stringify(
        changed.map(({ row, metrics, values }) => ({
          entity_id: row.id,
          entity_type: row.entity_type,
          last_contacted_at: values.lastContactedAt,
          last_contacted_via: values.lastContactedVia,
          next_meeting_at: values.nextMeetingAt,
          trend: values.trend,
          engagement_30: metrics.last30.mailsIn + metrics.last30.mailsOut + metrics.last30.meetings,
          crm: values,
        })),
      ),
      workspaceId,
    ],
  );
  return changed.map((c) => c.row.id);
}

/** Records of these workspaces whose next meeting has begun by `now`: their next one is another. */
export async function meetingsBegun(
  tx: Queryable,
  workspaceIds: readonly string[],
  now: number,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (workspaceIds.length === 0) return out;
  const { rows } = await tx.query<{ workspace_id: string; entity_id: string }>(
    `SELECT workspace_id, entity_id FROM entity_insight
      WHERE workspace_id = ANY($1::uuid[]) AND next_meeting_at IS NOT NULL AND next_meeting_at <= $2`,
    [workspaceIds, new Date(now)],
  );
  for (const r of rows) out.set(r.workspace_id, [...(out.get(r.workspace_id) ?? []), r.entity_id]);
  return out;
}

/**
 * Queues the insight properties these records owe the workspace's CRMs (`holdsInsights`): one
 * outbox row (op `insights`) per record and connection holding its record, whenever the values
 * differ from the last row queued for it (whatever became of that row: a record newly linked
 * in a connection, or a new connection, is owed them too). A row still pending is replaced by
 * the newer one: at most one waits per record and connection, with the latest values.
 *
 * Each row is keyed by the record and the log's time (`now`), and is not claimed before the
 * period has passed since the last one sent or being sent (the claim checks it again): at most
 * one write per record and connection per period, carrying the latest values when it goes.
 * Returns the connections owed a push.
 */
export async function queueInsightWrites(
  tx: Queryable,
  workspaceId: string,
  ids: readonly string[],
  targets: readonly TargetConnection[],
  now: number,
  periodMs: number,
): Promise<string[]> {
  const connections = targets.filter((t) => t.status !== 'disconnected' && holdsInsights(t)).map((t) => t.id);
  if (ids.length === 0 || connections.length === 0) return [];
  const { rows } = await tx.query<{ connection_id: string }>(
    `WITH candidate AS (
       SELECT i.entity_id, i.entity_type, i.crm, l.connection_id, l.external_id
         FROM entity_insight i
         -- An entity with two records in one connection is written on the first by external id,
         -- as its other writes are (outbox-writer.ts).
         JOIN LATERAL (SELECT DISTINCT ON (s.connection_id) s.connection_id, s.external_id FROM source_link s
                        WHERE s.entity_id = i.entity_id AND s.connection_id = ANY($3::uuid[])
                        ORDER BY s.connection_id, s.external_id COLLATE "C") l ON true
        WHERE i.workspace_id = $1 AND i.entity_id = ANY($2::uuid[])),
     last AS (
       SELECT DISTINCT ON (o.entity_id, o.connection_id) o.entity_id, o.connection_id, o.fields, o.external_id
         FROM outbox o
        WHERE o.entity_id = ANY($2::uuid[]) AND o.op = 'insights'
        ORDER BY o.entity_id, o.connection_id, o.id DESC),
     owed AS (
       SELECT c.* FROM candidate c
         LEFT JOIN last ON last.entity_id = c.entity_id AND last.connection_id = c.connection_id
        WHERE last.fields IS DISTINCT FROM c.crm OR last.external_id IS DISTINCT FROM c.external_id),
     replaced AS (
       UPDATE outbox o SET status = 'superseded'
         FROM owed
        WHERE o.entity_id = owed.entity_id AND o.connection_id = owed.connection_id AND o.op = 'insights'
          AND o.status = 'pending' AND o.idempotency_key <> 'insights:' || owed.entity_id::text || ':' || $4::text)
     INSERT INTO outbox (workspace_id, entity_id, entity_type, connection_id, op, external_id, fields, heads,
                         idempotency_key, not_before)
     SELECT $1, owed.entity_id, owed.entity_type, owed.connection_id, 'insights', owed.external_id, owed.crm,
            '{}', 'insights:' || owed.entity_id::text || ':' || $4::text,
            (SELECT max(COALESCE(s.sent_at, s.claimed_at)) + make_interval(secs => $5::double precision / 1000)
               FROM outbox s
              WHERE s.entity_id = owed.entity_id AND s.connection_id = owed.connection_id
                AND s.op = 'insights' AND s.status IN ('sent', 'sending'))
       FROM owed
     ON CONFLICT (connection_id, idempotency_key) DO UPDATE
        SET fields = EXCLUDED.fields, external_id = EXCLUDED.external_id WHERE outbox.status = 'pending'
     RETURNING connection_id::text`,
    [workspaceId, [...new Set(ids)].sort(), connections, String(now), periodMs],
  );
  return [...new Set(rows.map((r) => r.connection_id))];
}
