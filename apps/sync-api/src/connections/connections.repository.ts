import { Inject, Injectable } from '@nestjs/common';
import type { ProviderKey } from '@syncline/core';
import { type ConnectionId, err, INTERNAL_PROVIDER, ok, type Result, type WorkspaceId } from '@syncline/core';
import { Prisma, PrismaClient } from '@syncline/core/db';
import type { Db } from '../admin/audit-log.repository';
import type { CredentialsProof } from './account-proof.service';
import type { ConnectionStatus } from './connections.schemas';

/** A connection without its secrets: repository reads never select the ciphertext. */
export interface ConnectionRecord {
  id: ConnectionId;
  workspaceId: WorkspaceId;
  provider: ProviderKey;
  externalAccountId: string;
  displayName: string | null;
  accountAddress: string | null;
  status: ConnectionStatus;
  statusReason: string | null;
  watermark: Date | null;
  createdAt: Date;
  updatedAt: Date;
  hasCredentials: boolean;
  backfillSeen: number;
  backfillTotal: number | null;
  lastPullAt: Date | null;
  lastSuccessAt: Date | null;
  lastErrorCode: string | null;
  /** Its changes are staged, not synced, until an admin enables it. */
  dryRun: boolean;
  /** When the provider named its credentials' account as its own; null: unproven (takes nothing in). */
  credentialsVerifiedAt: Date | null;
}

/** Where a connection resumes after new credentials: see `statusAfterReauth`. */
export type ConnectionCursorsState = 'live' | 'backfill' | 'none';

export interface NewConnectionRow {
  id: ConnectionId;
  workspaceId: WorkspaceId;
  provider: ProviderKey;
  externalAccountId: string;
  displayName: string | null;
  credentials: { keyId: string; ciphertext: Uint8Array };
  /** How the provider named the credentials' account as `externalAccountId` (see AccountProver). */
  proof: CredentialsProof;
  /** Whose mailbox, calendar or tasks these are, as the provider named the address; null for a CRM. */
  accountAddress: string | null;
  dryRun?: boolean;
}

// The database enum spells hyphens as underscores (Prisma identifiers cannot hold '-').
export const DB_PROVIDER = {
  hubspot: 'hubspot',
  'google-calendar': 'google_calendar',
  gmail: 'gmail',
  'google-tasks': 'google_tasks',
  'microsoft-calendar': 'microsoft_calendar',
  'microsoft-mail': 'microsoft_mail',
  'microsoft-todo': 'microsoft_todo',
} as const satisfies Record<ProviderKey, Prisma.ConnectionCreateInput['provider']>;
type DbProvider = (typeof DB_PROVIDER)[ProviderKey];
const PROVIDER_KEY = Object.fromEntries(Object.entries(DB_PROVIDER).map(([key, db]) => [db, key])) as Record<
  DbProvider,
  ProviderKey
>;

/** The workspace's own connection (user edits) is no provider account: never listed or changed here. */
export const INTERNAL = INTERNAL_PROVIDER satisfies Prisma.ConnectionCreateInput['provider'];

export const RECORD = {
  id: true,
  workspaceId: true,
  provider: true,
  externalAccountId: true,
  displayName: true,
  accountAddress: true,
  status: true,
  statusReason: true,
  watermark: true,
  createdAt: true,
  updatedAt: true,
  credentialsKeyId: true,
  backfillSeen: true,
  backfillTotal: true,
  lastPullAt: true,
  lastSuccessAt: true,
  lastErrorCode: true,
  dryRun: true,
  credentialsVerifiedAt: true,
} as const satisfies Prisma.ConnectionSelect;

/** The consumer group whose progress is a connection's lag: the merge (apps/workers). */
export const SYNC_CONSUMER_GROUP = 'sync';
export type RecordRow = Prisma.ConnectionGetPayload<{ select: typeof RECORD }>;

@Injectable()
export class ConnectionsRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /**
   * `conflict` when the workspace already has this provider account. `alsoInTx` (the audit
   * entry) runs in the insert's transaction: the connection commits with it or not at all.
   */
  async create(
    row: NewConnectionRow,
    alsoInTx: (tx: Db, created: ConnectionRecord) => Promise<void>,
  ): Promise<Result<ConnectionRecord, 'conflict'>> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        const created = toRecord(
          await tx.connection.create({
            data: {
              id: row.id,
              workspaceId: row.workspaceId,
              provider: DB_PROVIDER[row.provider],
              externalAccountId: row.externalAccountId,
              displayName: row.displayName,
              credentialsKeyId: row.credentials.keyId,
              credentialsCiphertext: Uint8Array.from(row.credentials.ciphertext),
              credentialsVerifiedAt: new Date(),
              credentialsProof: row.proof,
              accountAddress: row.accountAddress,
              dryRun: row.dryRun ?? false,
            },
            select: RECORD,
          }),
        );
        await alsoInTx(tx, created);
        return ok(created);
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')
        return err('conflict');
      throw error;
    }
  }

  async list(workspaceId: WorkspaceId): Promise<ConnectionRecord[]> {
    const rows = await this.prisma.connection.findMany({
      where: { workspaceId, provider: { not: INTERNAL } },
      select: RECORD,
      orderBy: { createdAt: 'asc' },
    });
    return rows.map(toRecord);
  }

  /** Null when there is no such connection in this workspace, whether or not another has it. */
  async find(workspaceId: WorkspaceId, id: ConnectionId): Promise<ConnectionRecord | null> {
    const row = await this.prisma.connection.findFirst({
      where: { id, workspaceId, provider: { not: INTERNAL } },
      select: RECORD,
    });
    return row && toRecord(row);
  }

  /**
   * Events of these connections on the log that the sync group has not committed yet.
   * Only the unread tail of each partition is read (primary key range `offset > committed`),
   * so a caught-up log costs 16 index probes whatever its size.
   */
  async lag(ids: readonly ConnectionId[]): Promise<Map<ConnectionId, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.prisma.$queryRaw<{ connection_id: string; events: number }[]>`
      SELECT e.connection_id::text AS connection_id, count(*)::int AS events
        FROM log_partition h
        LEFT JOIN consumer_offset o ON o.group_name = ${SYNC_CONSUMER_GROUP} AND o.partition = h.partition
        JOIN change_event e ON e.partition = h.partition AND e."offset" > COALESCE(o.committed_offset, 0)
       WHERE e.connection_id = ANY(${[...ids]}::uuid[])
       GROUP BY e.connection_id`;
    return new Map(rows.map((r) => [r.connection_id as ConnectionId, r.events]));
  }

  /**
   * Seals in new credentials. A connection waiting for them (`needs_reauth`) resumes where
   * it was: `live` once its backfill had finished, `backfilling` mid-backfill, `pending` if
   * it never started. A disconnected one takes none: it is returned as it is. Null when there
   * is no such connection in this workspace. `alsoInTx` (the audit entry) runs in the
   * transaction of the new credentials, when there are any. `proof`: how the provider named
   * their account as the connection's (they are stored proven, or not at all).
   */
  async replaceCredentials(
    workspaceId: WorkspaceId,
    id: ConnectionId,
    credentials: { keyId: string; ciphertext: Uint8Array },
    proof: CredentialsProof,
    /** The address the provider named (kept as it was when none is named). */
    accountAddress: string | null,
    alsoInTx: (tx: Db, updated: ConnectionRecord) => Promise<void>,
  ): Promise<ConnectionRecord | null> {
    return this.prisma.$transaction(async (tx) => {
      // Locked, so that a disconnect (which erases the credentials) cannot interleave.
      await tx.$queryRaw`SELECT 1 FROM connection WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid
        FOR NO KEY UPDATE`;
      const current = await tx.connection.findFirst({
        where: { id, workspaceId, provider: { not: INTERNAL } },
        select: { status: true, cursors: true },
      });
      if (!current) return null;
      if (current.status === 'disconnected')
        return toRecord(await tx.connection.findUniqueOrThrow({ where: { id }, select: RECORD }));
      const resumed =
        current.status === 'needs_reauth' ? statusAfterReauth(cursorsState(current.cursors)) : null;
      const updated = await tx.connection.update({
        where: { id },
        data: {
          credentialsKeyId: credentials.keyId,
          credentialsCiphertext: Uint8Array.from(credentials.ciphertext),
          credentialsVerifiedAt: new Date(),
          credentialsProof: proof,
          ...(accountAddress === null ? {} : { accountAddress }),
          ...(resumed ? { status: resumed, statusReason: null, lastErrorCode: null } : {}),
        },
        select: RECORD,
      });
      const record = toRecord(updated);
      await alsoInTx(tx, record);
      return record;
    });
  }
}

export function toRecord(row: RecordRow): ConnectionRecord {
  return {
    id: row.id as ConnectionId,
    workspaceId: row.workspaceId as WorkspaceId,
    // The workspace's own connection is never read here (see INTERNAL).
    provider: PROVIDER_KEY[row.provider as DbProvider],
    externalAccountId: row.externalAccountId,
    displayName: row.displayName,
    accountAddress: row.accountAddress,
    status: row.status,
    statusReason: row.statusReason,
    watermark: row.watermark,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    hasCredentials: row.credentialsKeyId !== null,
    backfillSeen: row.backfillSeen,
    backfillTotal: row.backfillTotal,
    lastPullAt: row.lastPullAt,
    lastSuccessAt: row.lastSuccessAt,
    lastErrorCode: row.lastErrorCode,
    dryRun: row.dryRun,
    credentialsVerifiedAt: row.credentialsVerifiedAt,
  };
}

/** The workers keep `live` once a backfill finished and `backfill` while one runs (apps/workers pull). */
export function cursorsState(cursors: Prisma.JsonValue): ConnectionCursorsState {
  if (typeof cursors !== 'object' || cursors === null || Array.isArray(cursors)) return 'none';
  if ('live' in cursors) return 'live';
  return 'backfill' in cursors ? 'backfill' : 'none';
}

export function statusAfterReauth(state: ConnectionCursorsState): ConnectionStatus {
  if (state === 'live') return 'live';
  return state === 'backfill' ? 'backfilling' : 'pending';
}
