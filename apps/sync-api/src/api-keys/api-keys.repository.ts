import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyId, WorkspaceId } from '@syncline/core';
import { err, ok, type Result } from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import { Pool } from 'pg';
import type { Role } from '../auth/principal';
import { READ_POOL } from '../infra/database.module';
import { API_KEY_CHANNEL } from './api-key-cache';

export interface ApiKeyRecord {
  id: ApiKeyId;
  workspaceId: WorkspaceId;
  name: string;
  role: Role;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** What authentication needs: the record plus the stored hash. */
export interface ApiKeyCredential extends ApiKeyRecord {
  secretHash: Uint8Array;
}

/** The client a write goes through: a transaction the caller's audit entry joins. */
export type Db = Prisma.TransactionClient;

export interface NewApiKeyRow {
  workspaceId: WorkspaceId;
  name: string;
  role: Role;
  prefix: string;
  secretHash: Uint8Array;
}

const RECORD = {
  id: true,
  workspaceId: true,
  name: true,
  role: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

@Injectable()
export class ApiKeysRepository {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(READ_POOL) private readonly pool: Pool,
  ) {}

  /**
   * Unscoped on purpose: the key itself says which workspace it belongs to. Run for every
   * key the process has not cached (ApiKeyCache), so through `pg` rather than Prisma.
   */
  async findCredentialByPrefix(prefix: string): Promise<ApiKeyCredential | null> {
    const { rows } = await this.pool.query<RecordRow & { secretHash: Buffer }>({
      name: 'api-keys.by-prefix',
      text: `SELECT id::text AS id, workspace_id::text AS "workspaceId", name, role::text AS role, prefix,
              created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt",
              secret_hash AS "secretHash"
         FROM api_key WHERE prefix = $1`,
      values: [prefix],
    });
    const row = rows[0];
    return row ? { ...toRecord(row), secretHash: new Uint8Array(row.secretHash) } : null;
  }

  /** Records use unless another request already did within the window. */
  async touchLastUsed(id: ApiKeyId, at: Date, staleBefore: Date): Promise<void> {
    await this.prisma.apiKey.updateMany({
      where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: staleBefore } }] },
      data: { lastUsedAt: at },
    });
  }

  /** The new key, with `alsoInTx` (the audit entry) in its transaction. */
  async create(
    row: NewApiKeyRow,
    alsoInTx: (tx: Db, key: ApiKeyRecord) => Promise<void> = async () => undefined,
  ): Promise<ApiKeyRecord> {
    return this.prisma.$transaction(async (tx) => {
      const created = toRecord(
        await tx.apiKey.create({
          data: { ...row, secretHash: Uint8Array.from(row.secretHash) },
          select: RECORD,
        }),
      );
      await alsoInTx(tx, created);
      return created;
    });
  }

  async list(workspaceId: WorkspaceId): Promise<ApiKeyRecord[]> {
    const rows = await this.prisma.apiKey.findMany({
      where: { workspaceId },
      select: RECORD,
      orderBy: { createdAt: 'asc' },
    });
    return rows.map(toRecord);
  }

  /**
   * Revoking twice is fine; a key of another workspace is `not_found`, exactly like a missing
   * one (the prefix is that of a key revoked now, null if it already was). The revocation is
   * announced on API_KEY_CHANNEL as it commits, so that every API process drops the key from
   * its cache. `alsoInTx` (the audit entry) runs in its transaction, only for a key revoked now.
   */
  async revoke(
    workspaceId: WorkspaceId,
    id: ApiKeyId,
    at: Date,
    alsoInTx: (tx: Db, revoked: { name: string; role: Role }) => Promise<void> = async () => undefined,
  ): Promise<Result<{ prefix: string | null }, 'not_found'>> {
    return this.prisma.$transaction(async (tx) => {
      const revoked = await tx.$queryRaw<{ prefix: string; name: string; role: Role }[]>`
        WITH revoked AS (
          UPDATE api_key SET revoked_at = ${at}
           WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid AND revoked_at IS NULL
          RETURNING prefix, name, role::text AS role
        )
        SELECT prefix, name, role FROM revoked
         CROSS JOIN LATERAL (SELECT pg_notify(${API_KEY_CHANNEL}, revoked.prefix)) AS announced`;
      const row = revoked[0];
      if (row) {
        await alsoInTx(tx, { name: row.name, role: row.role });
        return ok({ prefix: row.prefix });
      }
      const exists = await tx.apiKey.count({ where: { id, workspaceId } });
      return exists > 0 ? ok({ prefix: null }) : err('not_found' as const);
    });
  }
}

type RecordRow = Omit<ApiKeyRecord, 'id' | 'workspaceId'> & { id: string; workspaceId: string };

// Field by field, so a column added to the select later never rides along unnoticed.
function toRecord(row: RecordRow): ApiKeyRecord {
  return {
    id: row.id as ApiKeyId,
    workspaceId: row.workspaceId as WorkspaceId,
    name: row.name,
    role: row.role,
    prefix: row.prefix,
    createdAt: row.createdAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
  };
}
