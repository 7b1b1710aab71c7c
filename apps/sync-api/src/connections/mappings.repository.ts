import { Inject, Injectable } from '@nestjs/common';
import {
  type ConnectionId,
  err,
  INTERNAL_PROVIDER,
  ok,
  type ProviderKey,
  type Result,
  type Sealed,
  type WorkspaceId,
} from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { Db } from '../admin/audit-log.repository';
import type { ConnectionStatus } from './connections.schemas';

/** `<entity type>.<field>` → provider property, as `connection.field_mappings` holds them. */
export type StoredMappings = Readonly<Record<string, string>>;

export interface MappingsRecord {
  id: ConnectionId;
  provider: ProviderKey;
  status: ConnectionStatus;
  externalAccountId: string;
  mappings: StoredMappings;
  version: number;
  updatedAt: Date | null;
}

export interface MappingRevisionRecord {
  version: number;
  mappings: Prisma.JsonValue;
  changedBy: string;
  createdAt: Date;
}

const INTERNAL = INTERNAL_PROVIDER satisfies Prisma.ConnectionCreateInput['provider'];

@Injectable()
export class MappingsRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** The connection's mappings and their version, or null when it is not one of the workspace's. */
  async find(workspaceId: WorkspaceId, id: ConnectionId): Promise<MappingsRecord | null> {
    const [row, latest] = await Promise.all([
      this.prisma.connection.findFirst({
        where: { id, workspaceId, provider: { not: INTERNAL } },
        select: { id: true, provider: true, status: true, externalAccountId: true, fieldMappings: true },
      }),
      this.prisma.connectionMappingRevision.findFirst({
        where: { connectionId: id, workspaceId },
        orderBy: { version: 'desc' },
        select: { version: true, createdAt: true },
      }),
    ]);
    if (!row) return null;
    return {
      id: row.id as ConnectionId,
      // The database enum spells the key's hyphens as underscores (see connections.repository).
      provider: row.provider.replaceAll('_', '-') as ProviderKey,
      status: row.status,
      externalAccountId: row.externalAccountId,
      mappings: storedMappingsOf(row.fieldMappings),
      version: latest?.version ?? 0,
      updatedAt: latest?.createdAt ?? null,
    };
  }

  /** The sealed credentials, to call the provider with; null without any. */
  async sealedCredentials(workspaceId: WorkspaceId, id: ConnectionId): Promise<Sealed | null> {
    const row = await this.prisma.connection.findFirst({
      where: { id, workspaceId },
      select: { credentialsCiphertext: true, credentialsKeyId: true },
    });
    if (!row?.credentialsCiphertext || !row.credentialsKeyId) return null;
    return { keyId: row.credentialsKeyId, ciphertext: Buffer.from(row.credentialsCiphertext) };
  }

  /**
   * Writes `mappings` to the connection under the next version and keeps them as a revision,
   * in one transaction that `alsoInTx` (the audit entry) joins. `stale` when they are no
   * longer at `expectedVersion`; `disconnected` when the connection was disconnected meanwhile.
   * Replacements of one connection's mappings are serialised by an advisory lock.
   */
  async replace(
    workspaceId: WorkspaceId,
    id: ConnectionId,
    mappings: StoredMappings,
    options: { expectedVersion: number | undefined; changedBy: string },
    alsoInTx: (tx: Db, version: number) => Promise<void>,
  ): Promise<Result<{ version: number }, { code: 'stale'; version: number } | { code: 'disconnected' }>> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`connection_mappings:${id}`}, 0))`;
      const latest = await tx.connectionMappingRevision.findFirst({
        where: { connectionId: id },
        orderBy: { version: 'desc' },
        select: { version: true },
      });
      const current = latest?.version ?? 0;
      if (options.expectedVersion !== undefined && options.expectedVersion !== current)
        return err({ code: 'stale' as const, version: current });
      const version = current + 1;
      const updated = await tx.connection.updateMany({
        where: { id, workspaceId, status: { not: 'disconnected' } },
        data: { fieldMappings: mappings as Prisma.InputJsonObject },
      });
      if (updated.count === 0) return err({ code: 'disconnected' as const });
      await tx.connectionMappingRevision.create({
        data: {
          connectionId: id,
          workspaceId,
          version,
          mappings: mappings as Prisma.InputJsonObject,
          changedBy: options.changedBy,
        },
      });
      await alsoInTx(tx, version);
      return ok({ version });
    });
  }

  /** Newest first, strictly below `before`. */
  async revisions(
    workspaceId: WorkspaceId,
    id: ConnectionId,
    page: { before?: number | undefined; limit: number },
  ): Promise<MappingRevisionRecord[]> {
    return this.prisma.connectionMappingRevision.findMany({
      where: {
        workspaceId,
        connectionId: id,
        ...(page.before === undefined ? {} : { version: { lt: page.before } }),
      },
      orderBy: { version: 'desc' },
      take: page.limit,
      select: { version: true, mappings: true, changedBy: true, createdAt: true },
    });
  }
}

/** Only string → string entries: what the connectors read (see webhooks.repository). */
export function storedMappingsOf(value: Prisma.JsonValue): StoredMappings {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
