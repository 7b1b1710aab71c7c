import { randomUUID } from 'node:crypto';
import { ConflictException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { type ConnectionId, Keyring } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import type { Principal } from '../auth/principal';
import { type ConnectionRecord, ConnectionsRepository } from './connections.repository';
import type { ConnectionView, CreateConnectionBody } from './connections.schemas';

/** Associated data for a connection's credentials: binds the ciphertext to its row. */
export const credentialsAad = (id: ConnectionId): string => `connection:${id}`;

@Injectable()
export class ConnectionsService {
  constructor(
    private readonly connections: ConnectionsRepository,
    @Inject(Keyring) private readonly keyring: Keyring,
    @InjectPinoLogger(ConnectionsService.name) private readonly logger: PinoLogger,
  ) {}

  async create(principal: Principal, body: CreateConnectionBody): Promise<ConnectionView> {
    // The id is chosen before the insert because the ciphertext is bound to it.
    const id = randomUUID() as ConnectionId;
    const sealed = this.keyring.seal(JSON.stringify(body.credentials), credentialsAad(id));
    const created = await this.connections.create({
      id,
      workspaceId: principal.workspaceId,
      provider: body.provider,
      externalAccountId: body.externalAccountId,
      displayName: body.displayName ?? null,
      credentials: sealed,
    });
    if (!created.ok) {
      throw new ConflictException(
        `this workspace already has a ${body.provider} connection for that account`,
      );
    }
    this.logger.info({ connectionId: id, provider: body.provider }, 'connection created');
    return toView(created.value);
  }

  async list(principal: Principal): Promise<{ data: ConnectionView[] }> {
    const records = await this.connections.list(principal.workspaceId);
    return { data: records.map(toView) };
  }

  async get(principal: Principal, id: string): Promise<ConnectionView> {
    const record = await this.connections.find(principal.workspaceId, id as ConnectionId);
    if (!record) throw new NotFoundException(`no connection ${id}`);
    return toView(record);
  }
}

function toView(record: ConnectionRecord): ConnectionView {
  return {
    id: record.id,
    provider: record.provider,
    externalAccountId: record.externalAccountId,
    displayName: record.displayName,
    status: record.status,
    statusReason: record.statusReason,
    watermark: record.watermark?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    hasCredentials: record.hasCredentials,
  };
}
