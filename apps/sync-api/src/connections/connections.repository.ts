import { Inject, Injectable } from '@nestjs/common';
import type { ProviderKey } from '@syncline/core';
import { type ConnectionId, err, ok, type Result, type WorkspaceId } from '@syncline/core';
import { Prisma, PrismaClient } from '@syncline/core/db';
import type { ConnectionStatus } from './connections.schemas';

/** A connection without its secrets: repository reads never select the ciphertext. */
export interface ConnectionRecord {
  id: ConnectionId;
  workspaceId: WorkspaceId;
  provider: ProviderKey;
  externalAccountId: string;
  displayName: string | null;
  status: ConnectionStatus;
  statusReason: string | null;
  watermark: Date | null;
  createdAt: Date;
  updatedAt: Date;
  hasCredentials: boolean;
}

export interface NewConnectionRow {
  id: ConnectionId;
  workspaceId: WorkspaceId;
  provider: ProviderKey;
  externalAccountId: string;
  displayName: string | null;
  credentials: { keyId: string; ciphertext: Uint8Array };
}

// The database enum spells hyphens as underscores (Prisma identifiers cannot hold '-').
const DB_PROVIDER = {
  hubspot: 'hubspot',
  'google-calendar': 'google_calendar',
  gmail: 'gmail',
  'google-tasks': 'google_tasks',
} as const satisfies Record<ProviderKey, Prisma.ConnectionCreateInput['provider']>;
type DbProvider = (typeof DB_PROVIDER)[ProviderKey];
const PROVIDER_KEY = Object.fromEntries(Object.entries(DB_PROVIDER).map(([key, db]) => [db, key])) as Record<
  DbProvider,
  ProviderKey
>;

const RECORD = {
  id: true,
  workspaceId: true,
  provider: true,
  externalAccountId: true,
  displayName: true,
  status: true,
  statusReason: true,
  watermark: true,
  createdAt: true,
  updatedAt: true,
  credentialsKeyId: true,
} as const satisfies Prisma.ConnectionSelect;
type RecordRow = Prisma.ConnectionGetPayload<{ select: typeof RECORD }>;

@Injectable()
export class ConnectionsRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** `conflict` when the workspace already has this provider account. */
  async create(row: NewConnectionRow): Promise<Result<ConnectionRecord, 'conflict'>> {
    try {
      const created = await this.prisma.connection.create({
        data: {
          id: row.id,
          workspaceId: row.workspaceId,
          provider: DB_PROVIDER[row.provider],
          externalAccountId: row.externalAccountId,
          displayName: row.displayName,
          credentialsKeyId: row.credentials.keyId,
          credentialsCiphertext: Uint8Array.from(row.credentials.ciphertext),
        },
        select: RECORD,
      });
      return ok(toRecord(created));
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')
        return err('conflict');
      throw error;
    }
  }

  async list(workspaceId: WorkspaceId): Promise<ConnectionRecord[]> {
    const rows = await this.prisma.connection.findMany({
      where: { workspaceId },
      select: RECORD,
      orderBy: { createdAt: 'asc' },
    });
    return rows.map(toRecord);
  }

  /** Null when there is no such connection in this workspace, whether or not another has it. */
  async find(workspaceId: WorkspaceId, id: ConnectionId): Promise<ConnectionRecord | null> {
    const row = await this.prisma.connection.findFirst({ where: { id, workspaceId }, select: RECORD });
    return row && toRecord(row);
  }
}

function toRecord(row: RecordRow): ConnectionRecord {
  return {
    id: row.id as ConnectionId,
    workspaceId: row.workspaceId as WorkspaceId,
    provider: PROVIDER_KEY[row.provider],
    externalAccountId: row.externalAccountId,
    displayName: row.displayName,
    status: row.status,
    statusReason: row.statusReason,
    watermark: row.watermark,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    hasCredentials: row.credentialsKeyId !== null,
  };
}
