import { Inject, Injectable } from '@nestjs/common';
import type { FieldMappings } from '@syncline/connectors';
import {
  type ConnectionId,
  type ProviderKey,
  type SourceChangeInput,
  storableJson,
  storableText,
  type WorkspaceId,
} from '@syncline/core';
import { type Prisma, PrismaClient } from '@syncline/core/db';
import { Pool } from 'pg';
import type { ConnectionStatus } from '../connections/connections.schemas';
import { READ_POOL } from '../infra/database.module';

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

/** A push subscription (a Google watch channel, a Microsoft Graph subscription) with its sealed token. */
export interface PushSubscriptionRow {
  id: string;
  connectionId: ConnectionId;
  resourceId: string | null;
  token: { keyId: string; ciphertext: Buffer };
}

/** A connection as its columns are read here (CONNECTION_COLUMNS). */
interface ConnectionRow {
  id: string;
  workspaceId: string;
  externalAccountId: string;
  status: ConnectionStatus;
  fieldMappings: unknown;
  credentialsVerifiedAt: Date | null;
}

// The connection lookups run for every webhook POST: through pg, as the other hot reads
// (database.module.ts), at a fraction of Prisma's CPU a query.
const CONNECTION_COLUMNS = `id, workspace_id AS "workspaceId", external_account_id AS "externalAccountId",
  status::text AS status, field_mappings AS "fieldMappings", credentials_verified_at AS "credentialsVerifiedAt"`;

@Injectable()
export class WebhooksRepository {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(READ_POOL) private readonly pool: Pool,
  ) {}

  /** Every HubSpot connection of these portals, in any workspace (one portal may be connected twice). */
  async hubspotConnections(portalIds: readonly string[]): Promise<WebhookConnection[]> {
    if (portalIds.length === 0) return [];
    const { rows } = await this.pool.query<ConnectionRow>(
      `SELECT ${CONNECTION_COLUMNS} FROM connection
        WHERE provider = 'hubspot' AND external_account_id = ANY($1::text[]) ORDER BY id`,
      [[...portalIds]],
    );
    return rows.map(toConnection);
  }

  /** Gmail connections of this mailbox; addresses compare without regard to case. */
  async gmailConnections(emailAddress: string): Promise<WebhookConnection[]> {
    const { rows } = await this.pool.query<ConnectionRow>(
      `SELECT ${CONNECTION_COLUMNS} FROM connection
        WHERE provider = 'gmail' AND lower(external_account_id) = lower($1) ORDER BY id`,
      [emailAddress],
    );
    return rows.map(toConnection);
  }

  async connection(id: ConnectionId): Promise<WebhookConnection | null> {
    const { rows } = await this.pool.query<ConnectionRow>(
      `SELECT ${CONNECTION_COLUMNS} FROM connection WHERE id = $1::uuid`,
      [id],
    );
    return rows[0] === undefined ? null : toConnection(rows[0]);
  }

  async pushSubscription(channelId: string): Promise<PushSubscriptionRow | null> {
    const row = await this.prisma.pushSubscription.findUnique({ where: { id: channelId } });
    return row && toPushSubscription(row);
  }

  /**
   * The subscriptions of these ids whose connection is of `provider`, and those connections.
   * A subscription of another provider's connection is left out, as if unknown: each
   * provider's notifications come to its own route.
   */
  async providerSubscriptions(
    provider: ProviderKey,
    ids: readonly string[],
  ): Promise<{ subscriptions: PushSubscriptionRow[]; connections: WebhookConnection[] }> {
    if (ids.length === 0) return { subscriptions: [], connections: [] };
    const rows = await this.prisma.pushSubscription.findMany({ where: { id: { in: [...ids] } } });
    // The provider's key is the stored value (the enum's @map).
    const { rows: owners } = await this.pool.query<ConnectionRow>(
      `SELECT ${CONNECTION_COLUMNS} FROM connection
        WHERE id = ANY($1::uuid[]) AND provider::text = $2 ORDER BY id`,
      [[...new Set(rows.map((r) => r.connectionId))], provider],
    );
    const connections = owners.map(toConnection);
    const owned = new Set(connections.map((c) => c.id as string));
    return {
      subscriptions: rows.filter((r) => owned.has(r.connectionId)).map(toPushSubscription),
      connections,
    };
  }

  /**
   * Makes these subscriptions due for renewal now (their expiry brought forward to `now`,
   * never pushed back): the workers' renewal replaces every subscription that expires within
   * its horizon, so its next pass subscribes again and retires these. Returns how many moved.
   */
  async expireSubscriptions(ids: readonly string[], now: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const { count } = await this.prisma.pushSubscription.updateMany({
      where: { id: { in: [...ids] }, expiresAt: { gt: now } },
      data: { expiresAt: now },
    });
    return count;
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

function toPushSubscription(row: Prisma.PushSubscriptionGetPayload<object>): PushSubscriptionRow {
  return {
    id: row.id,
    connectionId: row.connectionId as ConnectionId,
    resourceId: row.resourceId,
    token: { keyId: row.tokenKeyId, ciphertext: Buffer.from(row.tokenCiphertext) },
  };
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
function fieldMappingsOf(value: unknown): FieldMappings {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
