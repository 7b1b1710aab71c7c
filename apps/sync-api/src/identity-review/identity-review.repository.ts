import { Inject, Injectable } from '@nestjs/common';
import type { EntityType, WorkspaceId } from '@syncline/core';
import { Prisma, PrismaClient } from '@syncline/core/db';
import type { PageCursor } from '../admin/page-cursor';

export interface ReviewedRecordRow {
  id: string;
  displayName: string | null;
  fields: Prisma.JsonValue;
  mergedInto: string | null;
  sourceLinks: { connectionId: string; provider: string | null; externalId: string }[];
}

export interface PossibleDuplicateRecord {
  id: string;
  entityType: EntityType;
  status: 'open' | 'merged' | 'dismissed';
  score: number;
  evidence: Prisma.JsonValue;
  /** The queue's order (PRIORITY), as a decimal string. */
  priority: string;
  createdAt: Date;
  reviewedBy: string | null;
  reviewedAt: Date | null;
  a: ReviewedRecordRow;
  b: ReviewedRecordRow;
}

export interface EntityRow {
  id: string;
  entityType: EntityType;
  displayName: string | null;
  mergedInto: string | null;
}

export interface OperationRow {
  id: string;
  kind: 'merge' | 'unmerge';
  payload: Prisma.JsonValue;
  createdAt: Date;
  undoneAt: Date | null;
}

/**
 * What most deserves a person's time in the review queue, highest first: the pair's score with
 * its evidence weighed.
 *
 * | evidence                                                        | weight |
 * | --------------------------------------------------------------- | ------ |
 * | a key says they are one (`conflicting-deterministic-key`, `provider-refused-create`) | +0.5 |
 * | each of `same-phone`, `same-email-local-part`, `same-organisation-domain`, `same-company-name` | +0.05 |
 * | `same-connection`: one CRM keeps the two apart, so usually two people | −0.3 |
 */
const PRIORITY = Prisma.sql`round((score
  + CASE WHEN evidence ? 'conflicting-deterministic-key' OR evidence ? 'provider-refused-create' THEN 0.5 ELSE 0 END
  + 0.05 * ((evidence ? 'same-phone')::int + (evidence ? 'same-email-local-part')::int
            + (evidence ? 'same-organisation-domain')::int + (evidence ? 'same-company-name')::int)
  - CASE WHEN evidence ? 'same-connection' THEN 0.3 ELSE 0 END)::numeric, 4)`;

/** Where a page of the queue in priority order stopped. */
export interface PriorityCursor {
  priority: string;
  createdAt: Date;
  id: string;
}

interface DuplicateRow {
  id: string;
  priority: string;
  entity_type: EntityType;
  status: PossibleDuplicateRecord['status'];
  score: number;
  evidence: Prisma.JsonValue;
  created_at: Date;
  reviewed_by: string | null;
  reviewed_at: Date | null;
  entity_a: string;
  entity_b: string;
}

/** Possible duplicates and identity operations, always of one workspace: another's are not there. */
@Injectable()
export class IdentityReviewRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /**
   * By priority (PRIORITY, highest first; keyset on priority, created_at, id) or newest first
   * (keyset on created_at, id), with both records.
   */
  async duplicates(
    workspaceId: WorkspaceId,
    filter: {
      status: PossibleDuplicateRecord['status'];
      entityType?: EntityType | undefined;
      sort: 'priority' | 'newest';
      before?: PageCursor | PriorityCursor | undefined;
      limit: number;
    },
  ): Promise<PossibleDuplicateRecord[]> {
    const conditions = [
      Prisma.sql`workspace_id = ${workspaceId}::uuid`,
      Prisma.sql`status = ${filter.status}::possible_duplicate_status`,
    ];
    if (filter.entityType !== undefined) conditions.push(Prisma.sql`entity_type = ${filter.entityType}`);
    const before = filter.before;
    if (before !== undefined && 'priority' in before)
      conditions.push(
        Prisma.sql`(${PRIORITY}, created_at, id) < (${before.priority}::numeric, ${before.createdAt}::timestamptz, ${before.id}::uuid)`,
      );
    else if (before !== undefined)
      conditions.push(Prisma.sql`(created_at, id) < (${before.createdAt}::timestamptz, ${before.id}::uuid)`);
    const order =
      filter.sort === 'priority'
        ? Prisma.sql`${PRIORITY} DESC, created_at DESC, id DESC`
        : Prisma.sql`created_at DESC, id DESC`;
    const rows = await this.prisma.$queryRaw<DuplicateRow[]>`
      SELECT id::text, entity_type, status::text AS status, score, evidence, ${PRIORITY}::text AS priority,
             created_at, reviewed_by, reviewed_at, entity_a::text, entity_b::text
        FROM possible_duplicate
       WHERE ${Prisma.join(conditions, ' AND ')}
       ORDER BY ${order}
       LIMIT ${filter.limit}`;
    return this.withRecords(workspaceId, rows);
  }

  async duplicate(workspaceId: WorkspaceId, id: string): Promise<PossibleDuplicateRecord | null> {
    const rows = await this.prisma.$queryRaw<DuplicateRow[]>`
      SELECT id::text, entity_type, status::text AS status, score, evidence, ${PRIORITY}::text AS priority,
             created_at, reviewed_by, reviewed_at, entity_a::text, entity_b::text
        FROM possible_duplicate WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid`;
    return (await this.withRecords(workspaceId, rows))[0] ?? null;
  }

  /** An entity of the workspace, of any type (a merge tells a wrong type from a missing record). */
  async entity(workspaceId: WorkspaceId, id: string): Promise<EntityRow | null> {
    const rows = await this.prisma.$queryRaw<EntityRow[]>`
      SELECT id::text, entity_type AS "entityType", display_name AS "displayName", merged_into::text AS "mergedInto"
        FROM entity WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid`;
    return rows[0] ?? null;
  }

  async entities(workspaceId: WorkspaceId, ids: readonly string[]): Promise<EntityRow[]> {
    if (ids.length === 0) return [];
    return this.prisma.$queryRaw<EntityRow[]>`
      SELECT id::text, entity_type AS "entityType", display_name AS "displayName", merged_into::text AS "mergedInto"
        FROM entity WHERE id = ANY(${[...ids]}::uuid[]) AND workspace_id = ${workspaceId}::uuid`;
  }

  /** An applied identity operation of the workspace. */
  async operation(workspaceId: WorkspaceId, id: string): Promise<OperationRow | null> {
    const rows = await this.prisma.$queryRaw<OperationRow[]>`
      SELECT id::text, kind::text AS kind, payload, created_at AS "createdAt", undone_at AS "undoneAt"
        FROM identity_operation WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid`;
    return rows[0] ?? null;
  }

  /** Applied operations, newest first (keyset on created_at, id); of one record if asked. */
  async operations(
    workspaceId: WorkspaceId,
    filter: { recordId?: string | undefined; before?: PageCursor | undefined; limit: number },
  ): Promise<OperationRow[]> {
    const conditions = [Prisma.sql`workspace_id = ${workspaceId}::uuid`];
    if (filter.recordId !== undefined)
      conditions.push(
        Prisma.sql`(payload->>'survivorId' = ${filter.recordId.toLowerCase()} OR payload->>'absorbedId' = ${filter.recordId.toLowerCase()})`,
      );
    if (filter.before !== undefined)
      conditions.push(
        Prisma.sql`(created_at, id) < (${filter.before.createdAt}::timestamptz, ${filter.before.id}::uuid)`,
      );
    return this.prisma.$queryRaw<OperationRow[]>`
      SELECT id::text, kind::text AS kind, payload, created_at AS "createdAt", undone_at AS "undoneAt"
        FROM identity_operation
       WHERE ${Prisma.join(conditions, ' AND ')}
       ORDER BY created_at DESC, id DESC
       LIMIT ${filter.limit}`;
  }

  /** The intent of an identity operation on the workspace's change log (applied or not); null if none. */
  async operationOnLog(workspaceId: WorkspaceId, id: string): Promise<Prisma.JsonValue | null> {
    const rows = await this.prisma.$queryRaw<{ intent: Prisma.JsonValue }[]>`
      SELECT fields->'identityOperation' AS intent FROM change_event
       WHERE workspace_id = ${workspaceId}::uuid AND event_key = ${`identity-operation:${id}`} AND op = 'merge'
       LIMIT 1`;
    return rows[0]?.intent ?? null;
  }

  /** Two queries for the whole page: the records of every pair and their links. */
  private async withRecords(
    workspaceId: WorkspaceId,
    rows: DuplicateRow[],
  ): Promise<PossibleDuplicateRecord[]> {
    if (rows.length === 0) return [];
    const ids = [...new Set(rows.flatMap((r) => [r.entity_a, r.entity_b]))];
    const [entities, links] = await Promise.all([
      this.prisma.$queryRaw<
        { id: string; display_name: string | null; fields: Prisma.JsonValue; merged_into: string | null }[]
      >`
        SELECT id::text, display_name, fields, merged_into::text FROM entity
         WHERE id = ANY(${ids}::uuid[]) AND workspace_id = ${workspaceId}::uuid`,
      this.prisma.$queryRaw<
        { entity_id: string; connection_id: string; provider: string | null; external_id: string }[]
      >`
        SELECT l.entity_id::text, l.connection_id::text, c.provider::text AS provider, l.external_id
          FROM source_link l
          LEFT JOIN connection c ON c.id = l.connection_id AND c.workspace_id = l.workspace_id
         WHERE l.entity_id = ANY(${ids}::uuid[]) AND l.workspace_id = ${workspaceId}::uuid
         ORDER BY l.created_at, l.connection_id, l.external_id`,
    ]);
    const record = (id: string): ReviewedRecordRow => {
      const entity = entities.find((e) => e.id === id);
      return {
        id,
        displayName: entity?.display_name ?? null,
        fields: entity?.fields ?? {},
        mergedInto: entity?.merged_into ?? null,
        sourceLinks: links
          .filter((l) => l.entity_id === id)
          .map((l) => ({ connectionId: l.connection_id, provider: l.provider, externalId: l.external_id })),
      };
    };
    return rows.map((row) => ({
      id: row.id,
      entityType: row.entity_type,
      status: row.status,
      score: Number(row.score),
      evidence: row.evidence,
      priority: row.priority,
      createdAt: row.created_at,
      reviewedBy: row.reviewed_by,
      reviewedAt: row.reviewed_at,
      a: record(row.entity_a),
      b: record(row.entity_b),
    }));
  }
}
