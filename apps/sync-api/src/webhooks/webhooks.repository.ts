import { Inject, Injectable } from '@nestjs/common';
import type { FieldMappings } from '@syncline/connectors';
import {
  type ConnectionId,
  type SourceChangeInput,
  storableJson,
  storableText,
  type WorkspaceId,
} from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import type { ConnectionStatus } from '../connections/connections.schemas';

/** What a webhook needs to know of the connection it arrived for. */
export interface WebhookConnection {
  id: ConnectionId;
  workspaceId: WorkspaceId;
  externalAccountId: string;
  status: ConnectionStatus;
  fieldMappings: FieldMappings;
  /** The provider named its credentials' account as this one (see AccountProver); only then does it take anything in. */
  proven: boolean;
}

/** A Google watch channel with its sealed token. */
export interface PushSubscriptionRow {
  id: string;
  connectionId: ConnectionId;
  resourceId: string | null;
  token: { keyId: string; ciphertext: Buffer };
}

const CONNECTION = {
  id: true,
  workspaceId: true,
  externalAccountId: true,
  status: true,
  fieldMappings: true,
  credentialsVerifiedAt: true,
} as const satisfies Prisma.ConnectionSelect;
type ConnectionRow = Prisma.ConnectionGetPayload<{ select: typeof CONNECTION }>;

@Injectable()
export class WebhooksRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** Every HubSpot connection of these portals, in any workspace (one portal may be connected twice). */
  async hubspotConnections(portalIds: readonly string[]): Promise<WebhookConnection[]> {
    if (portalIds.length === 0) return [];
    const rows = await this.prisma.connection.findMany({
      where: { provider: 'hubspot', externalAccountId: { in: [...portalIds] } },
      select: CONNECTION,
      orderBy: { id: 'asc' },
    });
    return rows.map(toConnection);
  }

  /** Gmail connections of this mailbox; addresses compare without regard to case. */
  async gmailConnections(emailAddress: string): Promise<WebhookConnection[]> {
    const rows = await this.prisma.connection.findMany({
      where: { provider: 'gmail', externalAccountId: { equals: emailAddress, mode: 'insensitive' } },
      select: CONNECTION,
      orderBy: { id: 'asc' },
    });
    return rows.map(toConnection);
  }

  async connection(id: ConnectionId): Promise<WebhookConnection | null> {
    const row = await this.prisma.connection.findUnique({ where: { id }, select: CONNECTION });
    return row && toConnection(row);
  }

  async pushSubscription(channelId: string): Promise<PushSubscriptionRow | null> {
    const row = await this.prisma.pushSubscription.findUnique({ where: { id: channelId } });
    if (!row) return null;
    return {
      id: row.id,
      connectionId: row.connectionId as ConnectionId,
      resourceId: row.resourceId,
      token: { keyId: row.tokenKeyId, ciphertext: Buffer.from(row.tokenCiphertext) },
    };
  }

  /**
   * Keeps a change the log refused (a poison event) for a person to look at, instead of
   * letting it sink the rest of its batch. A redelivered batch does not record it twice.
   * What PostgreSQL cannot hold (a NUL, half a surrogate pair: often why the log refused it)
   * is written out as its escape, so the letter can always be stored.
   */
  async deadLetter(source: string, change: SourceChangeInput, message: string): Promise<void> {
    const eventKey = storableText(change.eventKey);
    const existing = await this.prisma.deadLetter.findFirst({
      where: { source, connectionId: change.connectionId, eventKey, status: 'open' },
      select: { id: true },
    });
    if (existing) return;
    await this.prisma.deadLetter.create({
      data: {
        workspaceId: change.workspaceId,
        source,
        connectionId: change.connectionId,
        eventKey,
        payload: storableJson(JSON.parse(JSON.stringify(change))) as Prisma.InputJsonValue,
        errorCode: 'Validation',
        errorMessage: storableText(message),
      },
    });
  }
}

function toConnection(row: ConnectionRow): WebhookConnection {
  return {
    id: row.id as ConnectionId,
    workspaceId: row.workspaceId as WorkspaceId,
    externalAccountId: row.externalAccountId,
    status: row.status,
    fieldMappings: fieldMappingsOf(row.fieldMappings),
    proven: row.credentialsVerifiedAt !== null,
  };
}

/** Only string → string entries; anything else in the column is ignored rather than trusted. */
function fieldMappingsOf(value: Prisma.JsonValue): FieldMappings {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
