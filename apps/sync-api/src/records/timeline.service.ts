import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { ProviderWebUrls } from '@syncline/connectors';
import type { EntityType } from '@syncline/core';
import { Prisma, PrismaClient } from '@syncline/core/db';
import { encodePageCursor } from '../admin/page-cursor';
import type { Principal } from '../auth/principal';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RecordsRepository } from './records.repository';
import { providerWebUrls, withUrls } from './source-links';
import {
  TIMELINE_TYPES,
  type TimelineItem,
  type TimelinePage,
  type TimelineQuery,
  type TimelineResource,
} from './timeline.schemas';

const ENTITY_TYPE_OF = { people: 'person', companies: 'company', deals: 'deal' } as const satisfies Record<
  TimelineResource,
  EntityType
>;

interface TimelineRow {
  activity_id: string;
  activity_type: TimelineItem['type'];
  occurred_at: Date;
  roles: TimelineItem['roles'];
  title: string | null;
  links: (Omit<TimelineItem['sourceLinks'][number], 'url'> & { account: string | null })[];
}

/**
 * A record's activities, newest first, read from `entity_association` (the sync stage's
 * derived rows): a person's own, a company's or deal's those of its associated people. A merged-away id reads as its survivor, and the survivor's timeline holds
 * the activities of every record merged into it: rows keep the person they were written
 * for and the read follows `entity.merged_into`, so an unmerge needs no rewrite and a replay
 * writes the same rows whatever was merged since.
 */
@Injectable()
export class RecordTimelineService {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(RecordsRepository) private readonly records: RecordsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.webUrls = providerWebUrls(config);
  }

  private readonly webUrls: ProviderWebUrls;

  async timeline(
    principal: Principal,
    resource: TimelineResource,
    id: string,
    query: TimelineQuery,
  ): Promise<TimelinePage> {
    const { workspaceId } = principal;
    const entityType = ENTITY_TYPE_OF[resource];
    const recordId = await this.records.readableId(workspaceId, entityType, id);
    if (recordId === null) throw new NotFoundException(`no ${entityType} ${id}`);
    const types = query.types ?? [...TIMELINE_TYPES];
    const after =
      query.cursor === undefined
        ? Prisma.empty
        : Prisma.sql`AND (a.occurred_at, a.activity_id) < (${query.cursor.createdAt}::timestamptz, ${query.cursor.id}::uuid)`;
    // A person is its own party; a company's or deal's are its associated people (entity_relation,
    // at either end, of the record and every record merged into it), each as its survivor.
    const seed =
      entityType === 'person'
        ? Prisma.sql`SELECT id FROM entity WHERE id = ${recordId}::uuid AND workspace_id = ${workspaceId}::uuid`
        : Prisma.sql`
          SELECT COALESCE(p.merged_into, p.id) AS id
            FROM (SELECT r.to_id AS other FROM entity_relation r
                   WHERE r.workspace_id = ${workspaceId}::uuid AND r.to_type = 'person' AND r.from_id IN (SELECT id FROM self)
                  UNION
                  SELECT r.from_id FROM entity_relation r
                   WHERE r.workspace_id = ${workspaceId}::uuid AND r.from_type = 'person' AND r.to_id IN (SELECT id FROM self)) o
            JOIN entity p ON p.id = o.other AND p.workspace_id = ${workspaceId}::uuid`;
    // One row more than asked says whether there is a next page.
    const rows = await this.prisma.$queryRaw<TimelineRow[]>`
      WITH RECURSIVE self AS (
        SELECT id FROM entity WHERE id = ${recordId}::uuid AND workspace_id = ${workspaceId}::uuid
        UNION
        SELECT e.id FROM entity e JOIN self s ON e.merged_into = s.id WHERE e.workspace_id = ${workspaceId}::uuid
      ), party AS (
        ${seed}
        UNION
        SELECT e.id FROM entity e JOIN party p ON e.merged_into = p.id WHERE e.workspace_id = ${workspaceId}::uuid
      ), items AS (
        SELECT a.activity_id, a.activity_type, a.occurred_at, array_agg(DISTINCT a.role ORDER BY a.role) AS roles
          FROM entity_association a
          JOIN entity act ON act.id = a.activity_id AND act.merged_into IS NULL
         WHERE a.workspace_id = ${workspaceId}::uuid
           AND a.party_id IN (SELECT id FROM party)
           AND a.activity_type = ANY(${types}::text[])
           ${after}
         GROUP BY a.activity_id, a.activity_type, a.occurred_at
         ORDER BY a.occurred_at DESC, a.activity_id DESC
         LIMIT ${query.limit + 1}
      )
      SELECT i.activity_id::text AS activity_id, i.activity_type, i.occurred_at, i.roles,
             COALESCE(CASE WHEN i.activity_type = 'email_activity' THEN e.fields->>'subject'
                           ELSE e.fields->>'title' END, e.display_name) AS title,
             COALESCE((SELECT json_agg(json_build_object('connectionId', l.connection_id, 'provider', c.provider,
                                                         'externalId', l.external_id, 'account', c.external_account_id)
                                       ORDER BY l.created_at, l.connection_id, l.external_id)
                         FROM source_link l
                         LEFT JOIN connection c ON c.id = l.connection_id AND c.workspace_id = l.workspace_id
                        WHERE l.entity_id = i.activity_id AND l.workspace_id = e.workspace_id), '[]') AS links
        FROM items i JOIN entity e ON e.id = i.activity_id
       ORDER BY i.occurred_at DESC, i.activity_id DESC`;
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      recordId,
      data: page.map((row) => ({
        id: row.activity_id,
        type: row.activity_type,
        occurredAt: row.occurred_at.toISOString(),
        title: row.title,
        roles: row.roles,
        sourceLinks: withUrls(row.links, row.activity_type, this.webUrls),
      })),
      nextCursor:
        rows.length > query.limit && last
          ? encodePageCursor({ createdAt: last.occurred_at, id: last.activity_id })
          : null,
    };
  }
}
