import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { EntityType } from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';
import { EMPTY_METRICS, type InsightMetrics } from '@syncline/insights';
import type { Principal } from '../auth/principal';
import { DEFAULT_TIME_ZONE } from '../workspace-settings/time-zone.schemas';
import type { InsightsResource, RecordInsights } from './insights.schemas';
import { RecordsRepository } from './records.repository';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

const ENTITY_TYPE_OF = { people: 'person', companies: 'company', deals: 'deal' } as const satisfies Record<
  InsightsResource,
  EntityType
>;

/**
 * A record's activity insights as the sync stage folded them (libs/insights): the latest pane
 * is the result for the open day (a record's result on a day is the latest pane on or before
 * it), read with the workspace's watermark, who holds it, and the zone its days are cut in.
 * The next meeting is read from what activities count for now, against the request's time. A
 * company or deal counts the activities of its people, each once.
 */
@Injectable()
export class RecordInsightsService {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(RecordsRepository) private readonly records: RecordsRepository,
  ) {}

  async of(
    principal: Principal,
    resource: InsightsResource,
    id: string,
    now = new Date(),
  ): Promise<RecordInsights> {
    const { workspaceId } = principal;
    const entityType = ENTITY_TYPE_OF[resource];
    const recordId = await this.records.readableId(workspaceId, entityType, id);
    if (recordId === null) throw new NotFoundException(`no ${entityType} ${id}`);
    const [pane] = await this.prisma.$queryRaw<
      { window_end: string; trigger: RecordInsights['trigger']; metrics: InsightMetrics }[]
    >`SELECT window_end::text AS window_end, trigger, metrics FROM insight_pane
       WHERE workspace_id = ${workspaceId}::uuid AND entity_id = ${recordId}::uuid
       ORDER BY window_end DESC LIMIT 1`;
    const [state] = await this.prisma.$queryRaw<
      {
        watermark: Date | null;
        held_by: { connectionId: string; watermark: string | null }[];
        time_zone: string | null;
      }[]
    >`SELECT watermark, held_by, time_zone FROM insights_state WHERE workspace_id = ${workspaceId}::uuid`;
    const holders = state?.held_by ?? [];
    const connections = await this.prisma.$queryRaw<
      { id: string; provider: string; display_name: string | null; status: string }[]
    >`SELECT id::text AS id, provider::text AS provider, display_name, status::text AS status FROM connection
       WHERE workspace_id = ${workspaceId}::uuid AND id = ANY(${holders.map((h) => h.connectionId)}::uuid[])`;
    const byId = new Map(connections.map((c) => [c.id, c]));
    const [next] = await this.prisma.$queryRaw<{ at: Date | null }[]>`
      SELECT min(event_time) AS at FROM activity_contribution
       WHERE workspace_id = ${workspaceId}::uuid AND entity_id = ${recordId}::uuid
         AND kind = 'meeting' AND event_time > ${now}`;
    const sources = await this.prisma.$queryRaw<{ provider: string | null; activities: number }[]>`
      SELECT c.provider::text AS provider, count(DISTINCT a.activity_id)::int AS activities
        FROM activity_contribution a LEFT JOIN connection c ON c.id = a.connection_id
       WHERE a.workspace_id = ${workspaceId}::uuid AND a.entity_id = ${recordId}::uuid
       GROUP BY 1 ORDER BY 1`;
    const [total] = await this.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(DISTINCT activity_id)::int AS n FROM activity_contribution
       WHERE workspace_id = ${workspaceId}::uuid AND entity_id = ${recordId}::uuid`;
    const m = pane?.metrics ?? EMPTY_METRICS;
    return {
      recordId,
      computedBy: 'syncline',
      activities: total?.n ?? 0,
      sources,
      completeUpTo: state?.watermark?.toISOString() ?? null,
      timeZone: state?.time_zone ?? DEFAULT_TIME_ZONE,
      heldBy: holders.map((h) => {
        const c = byId.get(h.connectionId);
        return {
          connectionId: h.connectionId,
          provider: c?.provider ?? null,
          displayName: c?.display_name ?? null,
          status: c?.status ?? null,
          watermark: h.watermark,
        };
      }),
      windowEnd: pane?.window_end ?? null,
      trigger: pane?.trigger ?? null,
      lastContactedAt: iso(m.lastContactedAt),
      lastContactedVia: m.lastContactedVia,
      lastInboundAt: iso(m.lastInboundAt),
      lastOutboundAt: iso(m.lastOutboundAt),
      nextMeetingAt: next?.at?.toISOString() ?? null,
      last7: m.last7,
      last30: m.last30,
      last90: m.last90,
      replies90: m.replies90,
      medianReplySeconds90: m.medianReplyMs90 === null ? null : Math.floor(m.medianReplyMs90 / 1000),
      trend: m.trend,
    };
  }
}
