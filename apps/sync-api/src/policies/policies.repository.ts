import { Inject, Injectable } from '@nestjs/common';
import { type EntityType, err, INTERNAL_PROVIDER, ok, type Result, type WorkspaceId } from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { Db } from '../admin/audit-log.repository';

/** A field's policy as `field_policy` and `PgMergeStore.policies()` spell it. */
export type StoredPolicy =
  | { kind: 'lww' }
  | { kind: 'priority'; order: string[] }
  | { kind: 'manual' }
  | { kind: 'union' };

/** field → policy, lww fields left out. */
export type StoredPolicies = Readonly<Record<string, StoredPolicy>>;

export interface PolicySetRecord {
  policies: StoredPolicies;
  version: number;
  updatedAt: Date | null;
}

export interface RevisionRecord {
  version: number;
  policies: Prisma.JsonValue;
  changedBy: string;
  createdAt: Date;
}

const INTERNAL = INTERNAL_PROVIDER satisfies Prisma.ConnectionCreateInput['provider'];

@Injectable()
export class PoliciesRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** The rows the merge reads, and the set's version (its newest revision; 0 without one). */
  async find(workspaceId: WorkspaceId, entityType: EntityType): Promise<PolicySetRecord> {
    const [rows, latest] = await Promise.all([
      this.prisma.fieldPolicy.findMany({
        where: { workspaceId, entityType },
        select: { field: true, policy: true, priority: true },
        orderBy: { field: 'asc' },
      }),
      this.prisma.fieldPolicyRevision.findFirst({
        where: { workspaceId, entityType },
        orderBy: { version: 'desc' },
        select: { version: true, createdAt: true },
      }),
    ]);
    return {
      policies: Object.fromEntries(rows.map((row) => [row.field, toPolicy(row.policy, row.priority)])),
      version: latest?.version ?? 0,
      updatedAt: latest?.createdAt ?? null,
    };
  }

  /** The workspace's provider connections (not its own `syncline` one): what a priority order may name. */
  async providerConnectionIds(workspaceId: WorkspaceId): Promise<Set<string>> {
    const rows = await this.prisma.connection.findMany({
      where: { workspaceId, provider: { not: INTERNAL } },
      select: { id: true },
    });
    return new Set(rows.map((row) => row.id));
  }

  /** Every connection's field mappings, where custom fields come from. */
  async fieldMappings(workspaceId: WorkspaceId): Promise<Prisma.JsonValue[]> {
    const rows = await this.prisma.connection.findMany({
      where: { workspaceId, provider: { not: INTERNAL } },
      select: { fieldMappings: true },
    });
    return rows.map((row) => row.fieldMappings);
  }

  /**
   * Replaces the type's rows with `policies` under the next version and keeps the set as a
   * revision, in one transaction that `alsoInTx` (the audit entry) joins. `stale` when the
   * set is no longer at `expectedVersion`. Replacements of one set are serialised by an
   * advisory lock, so each reads the version the one before it wrote.
   */
  async replace(
    workspaceId: WorkspaceId,
    entityType: EntityType,
    policies: StoredPolicies,
    options: { expectedVersion: number | undefined; changedBy: string },
    alsoInTx: (tx: Db, version: number) => Promise<void>,
  ): Promise<Result<{ version: number; updatedAt: Date }, { code: 'stale'; version: number }>> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`field_policy:${workspaceId}:${entityType}`}, 0))`;
      const latest = await tx.fieldPolicyRevision.findFirst({
        where: { workspaceId, entityType },
        orderBy: { version: 'desc' },
        select: { version: true },
      });
      const current = latest?.version ?? 0;
      if (options.expectedVersion !== undefined && options.expectedVersion !== current)
        return err({ code: 'stale' as const, version: current });
      const version = current + 1;
      const revision = await tx.fieldPolicyRevision.create({
        data: {
          workspaceId,
          entityType,
          version,
          policies: policies as Prisma.InputJsonObject,
          changedBy: options.changedBy,
        },
        select: { createdAt: true },
      });
      await tx.fieldPolicy.deleteMany({ where: { workspaceId, entityType } });
      await tx.fieldPolicy.createMany({
        data: Object.entries(policies).map(([field, policy]) => ({
          workspaceId,
          entityType,
          field,
          policy: policy.kind,
          priority: policy.kind === 'priority' ? [...policy.order] : [],
          version,
        })),
      });
      await alsoInTx(tx, version);
      return ok({ version, updatedAt: revision.createdAt });
    });
  }

  /** Newest first, strictly below `before`. */
  async revisions(
    workspaceId: WorkspaceId,
    entityType: EntityType,
    page: { before?: number | undefined; limit: number },
  ): Promise<RevisionRecord[]> {
    return this.prisma.fieldPolicyRevision.findMany({
      where: {
        workspaceId,
        entityType,
        ...(page.before === undefined ? {} : { version: { lt: page.before } }),
      },
      orderBy: { version: 'desc' },
      take: page.limit,
      select: { version: true, policies: true, changedBy: true, createdAt: true },
    });
  }
}

/** A row as PgMergeStore reads it: the `priority` column only counts for `priority`. */
function toPolicy(kind: string, priority: Prisma.JsonValue): StoredPolicy {
  switch (kind) {
    case 'priority':
      return { kind, order: Array.isArray(priority) ? priority.map(String) : [] };
    case 'manual':
    case 'union':
    case 'lww':
      return { kind };
    default:
      // The merge refuses such a row too (PgMergeStore.policies): a bug, not a request error.
      throw new Error(`field_policy holds an unknown policy ${kind}`);
  }
}
