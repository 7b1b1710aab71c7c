import { randomUUID } from 'node:crypto';
import { ConflictException, HttpStatus, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { type ConnectionId, Keyring, type ProviderKey } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import type { Db } from '../admin/audit-log.repository';
import { AuditLogService } from '../admin/audit-log.service';
import type { Principal } from '../auth/principal';
import { CodedHttpException, ValidationFailedException } from '../common/api-errors';
import { PullQueue } from '../infra/pull-queue.module';
import { AccountProver } from './account-proof.service';
import { type LifecycleAction, refusalMessage } from './connection-lifecycle';
import {
  ConnectionLifecycleRepository,
  type DisconnectData,
  type LifecycleError,
} from './connection-lifecycle.repository';
import { type ConnectionRecord, ConnectionsRepository } from './connections.repository';
import {
  type ConnectionView,
  type CreateConnectionBody,
  type ReplaceCredentialsBody,
  replaceCredentialsFor,
} from './connections.schemas';

/** Associated data for a connection's credentials: binds the ciphertext to its row. */
export const credentialsAad = (id: ConnectionId): string => `connection:${id}`;

/** An account an admin consented to through OAuth, with the tokens to seal. */
export interface OAuthConnectionInput {
  provider: ProviderKey;
  externalAccountId: string;
  displayName: string | null;
  /** The address the provider's id token named (Google, Microsoft); null for a CRM. */
  address: string | null;
  credentials: Readonly<Record<string, unknown>>;
  /** A new connection starts in dry run; an existing one keeps its mode. */
  dryRun: boolean;
}

@Injectable()
export class ConnectionsService {
  constructor(
    @Inject(ConnectionsRepository) private readonly connections: ConnectionsRepository,
    @Inject(ConnectionLifecycleRepository) private readonly lifecycle: ConnectionLifecycleRepository,
    @Inject(Keyring) private readonly keyring: Keyring,
    @Inject(PullQueue) private readonly pulls: PullQueue,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @Inject(AccountProver) private readonly prover: AccountProver,
    @InjectPinoLogger(ConnectionsService.name) private readonly logger: PinoLogger,
  ) {}

  /**
   * Connects an account by its credentials, once the provider has named their account as
   * `externalAccountId` (AccountProver: a 400 or 503 otherwise, and nothing stored).
   */
  async create(principal: Principal, body: CreateConnectionBody): Promise<ConnectionView> {
    const proven = await this.prover.prove(body.provider, body.externalAccountId, body.credentials);
    const externalAccountId = proven.externalAccountId;
    // The id is chosen before the insert because the ciphertext is bound to it.
    const id = randomUUID() as ConnectionId;
    const sealed = this.keyring.seal(JSON.stringify(body.credentials), credentialsAad(id));
    const created = await this.connections.create(
      {
        id,
        workspaceId: principal.workspaceId,
        provider: body.provider,
        externalAccountId,
        displayName: body.displayName ?? null,
        credentials: sealed,
        proof: proven.proof,
        accountAddress: proven.address,
        dryRun: body.dryRun,
      },
      (tx) =>
        this.audit.record(
          principal,
          'connection.created',
          id,
          { provider: body.provider, externalAccountId, dryRun: body.dryRun, proof: proven.proof },
          tx,
        ),
    );
    if (!created.ok) {
      throw new ConflictException(
        `this workspace already has a ${body.provider} connection for that account`,
      );
    }
    this.logger.info({ connectionId: id, provider: body.provider }, 'connection created');
    // The first pull starts the backfill (the workers move the connection to backfilling); in
    // dry run its changes are staged, not synced.
    await this.requestPull(id, 'connection created');
    return this.view(created.value);
  }

  async list(principal: Principal): Promise<{ data: ConnectionView[] }> {
    const records = await this.connections.list(principal.workspaceId);
    const lag = await this.connections.lag(records.map((r) => r.id));
    const now = new Date();
    return { data: records.map((record) => toView(record, lag.get(record.id) ?? 0, now)) };
  }

  async get(principal: Principal, id: string): Promise<ConnectionView> {
    const record = await this.connections.find(principal.workspaceId, id as ConnectionId);
    if (!record) throw new NotFoundException(`no connection ${id}`);
    return this.view(record);
  }

  /**
   * Reseals the credentials once the provider has named their account as the connection's
   * (the credentials it has are kept otherwise); a connection that needed them resumes, and
   * is pulled at once.
   */
  async replaceCredentials(
    principal: Principal,
    id: string,
    body: ReplaceCredentialsBody,
  ): Promise<ConnectionView> {
    const connectionId = id as ConnectionId;
    const current = await this.connections.find(principal.workspaceId, connectionId);
    if (!current) throw new NotFoundException(`no connection ${id}`);
    if (current.status === 'disconnected') throw disconnectedRefusal(id, 'take credentials');
    const fit = replaceCredentialsFor(current.provider).safeParse(body);
    if (!fit.success) throw new ValidationFailedException(fit.error.issues, { part: 'body' });
    const proven = await this.prover.prove(current.provider, current.externalAccountId, body.credentials);
    const sealed = this.keyring.seal(JSON.stringify(body.credentials), credentialsAad(connectionId));
    const updated = await this.connections.replaceCredentials(
      principal.workspaceId,
      connectionId,
      sealed,
      proven.proof,
      proven.address,
      (tx, record) =>
        this.audit.record(
          principal,
          'connection.credentials_replaced',
          connectionId,
          { status: record.status, proof: proven.proof },
          tx,
        ),
    );
    if (!updated) throw new NotFoundException(`no connection ${id}`);
    if (updated.status === 'disconnected') throw disconnectedRefusal(id, 'take credentials');
    this.logger.info({ connectionId, status: updated.status }, 'connection credentials replaced');
    if (updated.status !== 'paused') {
      await this.requestPull(connectionId, 'credentials replaced');
    }
    return this.view(updated);
  }

  /**
   * Connects an account through OAuth: a new connection, or, when the workspace already has
   * this account, new credentials for it (consenting again is how an admin re-authorises,
   * so no 409). Either way it is audited as `connection.oauth_connected` and pulled.
   */
  async connectOAuth(principal: Principal, input: OAuthConnectionInput): Promise<ConnectionView> {
    const id = randomUUID() as ConnectionId;
    const audited =
      (reconnected: boolean) =>
      (tx: Db, connected: ConnectionRecord): Promise<void> =>
        this.audit.record(
          principal,
          'connection.oauth_connected',
          connected.id,
          {
            provider: input.provider,
            externalAccountId: input.externalAccountId,
            reconnected,
            dryRun: connected.dryRun,
          },
          tx,
        );
    const created = await this.connections.create(
      {
        id,
        workspaceId: principal.workspaceId,
        provider: input.provider,
        externalAccountId: input.externalAccountId,
        displayName: input.displayName,
        credentials: this.keyring.seal(JSON.stringify(input.credentials), credentialsAad(id)),
        // The provider named the account itself: HubSpot's token info, Google's and Microsoft's verified id tokens.
        proof: 'oauth_consent',
        accountAddress: input.address,
        dryRun: input.dryRun,
      },
      audited(false),
    );
    let record: ConnectionRecord | null = created.ok ? created.value : null;
    if (!record) {
      const existing = (await this.connections.list(principal.workspaceId)).find(
        (r) => r.provider === input.provider && r.externalAccountId === input.externalAccountId,
      );
      if (existing) {
        const sealed = this.keyring.seal(JSON.stringify(input.credentials), credentialsAad(existing.id));
        record = await this.connections.replaceCredentials(
          principal.workspaceId,
          existing.id,
          sealed,
          'oauth_consent',
          input.address,
          audited(true),
        );
      }
    }
    // Only the workspace's own (internal) connection could collide without being listed.
    if (!record) throw new ConflictException(`cannot connect that ${input.provider} account`);
    if (record.status === 'disconnected') throw disconnectedRefusal(record.id, 'be connected again');
    const reconnected = !created.ok;
    this.logger.info(
      { connectionId: record.id, provider: input.provider, reconnected, status: record.status },
      'connection connected through OAuth',
    );
    if (record.status !== 'paused') {
      await this.requestPull(record.id, reconnected ? 'reconnected through OAuth' : 'connection created');
    }
    return this.view(record);
  }

  /** Stops pulling and pushing it; its cursor and pending writes wait for a resume. */
  pause(principal: Principal, id: string): Promise<ConnectionView> {
    return this.transition(principal, id, 'pause');
  }

  /** Back where it stopped (`live`, or mid-backfill); pulled at once, its pending writes sent. */
  resume(principal: Principal, id: string): Promise<ConnectionView> {
    return this.transition(principal, id, 'resume');
  }

  /** Reads it again from scratch: cursors dropped, a backfill from the start. */
  resync(principal: Principal, id: string): Promise<ConnectionView> {
    return this.transition(principal, id, 'resync');
  }

  async disconnect(principal: Principal, id: string, data: DisconnectData): Promise<ConnectionView> {
    const connectionId = id as ConnectionId;
    const done = await this.lifecycle.disconnect(principal.workspaceId, connectionId, data, (tx, change) =>
      this.audit.record(
        principal,
        'connection.disconnected',
        connectionId,
        { data, previousStatus: change.from, ...change.counts },
        tx,
      ),
    );
    if (!done.ok) throw lifecycleRefusal(done.error, id, 'be erased');
    const { record, changed, counts } = done.value;
    if (changed) {
      this.logger.info({ connectionId, data, ...counts }, 'connection disconnected');
    }
    return this.view(record);
  }

  private async transition(
    principal: Principal,
    id: string,
    action: LifecycleAction,
  ): Promise<ConnectionView> {
    const connectionId = id as ConnectionId;
    const done = await this.lifecycle.transition(principal.workspaceId, connectionId, action, (tx, change) =>
      this.audit.record(
        principal,
        AUDITED[action],
        connectionId,
        { previousStatus: change.from, status: change.record.status },
        tx,
      ),
    );
    if (!done.ok) throw lifecycleRefusal(done.error, id, action);
    const { record, from, changed } = done.value;
    if (changed)
      this.logger.info({ connectionId, from, status: record.status, action }, 'connection lifecycle');
    // Resume pulls even a connection that was not paused (a harmless nudge); resync only when
    // it changed something. Pending writes need no job here: the workers' outbox sweep (every
    // few seconds) sends those of every live or backfilling connection.
    if (action === 'resume' || (action === 'resync' && changed)) {
      await this.requestPull(connectionId, action === 'resume' ? 'resumed by an admin' : 'full resync');
    }
    return this.view(record);
  }

  private async view(record: ConnectionRecord): Promise<ConnectionView> {
    const lag = await this.connections.lag([record.id]);
    return toView(record, lag.get(record.id) ?? 0, new Date());
  }

  /**
   * The row is already committed: a Redis outage must not fail the request (the workers'
   * scheduled pull-all picks the connection up), so the failure is logged, not thrown.
   */
  private async requestPull(connectionId: ConnectionId, reason: string): Promise<void> {
    try {
      await this.pulls.enqueue(connectionId, reason);
    } catch (error) {
      this.logger.warn(
        { err: error, connectionId },
        'could not enqueue a pull; the scheduled pull will run it',
      );
    }
  }
}

const AUDITED = {
  pause: 'connection.paused',
  resume: 'connection.resumed',
  resync: 'connection.resync_requested',
} as const satisfies Record<LifecycleAction, string>;

function lifecycleRefusal(error: LifecycleError, id: string, action: string): Error {
  if (error.code === 'not_found') return new NotFoundException(`no connection ${id}`);
  return new CodedHttpException(
    HttpStatus.CONFLICT,
    error.code,
    error.message ?? refusalMessage(error.code, id, action),
  );
}

const disconnectedRefusal = (id: string, action: string): Error =>
  new CodedHttpException(
    HttpStatus.CONFLICT,
    'connection_disconnected',
    refusalMessage('connection_disconnected', id, action),
  );

function toView(record: ConnectionRecord, lagEvents: number, now: Date): ConnectionView {
  const watermark = record.watermark?.toISOString() ?? null;
  return {
    id: record.id,
    provider: record.provider,
    externalAccountId: record.externalAccountId,
    displayName: record.displayName,
    accountAddress: record.accountAddress,
    status: record.status,
    statusReason: record.statusReason,
    watermark: record.watermark?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    hasCredentials: record.hasCredentials,
    credentialsVerifiedAt: record.credentialsVerifiedAt?.toISOString() ?? null,
    dryRun: record.dryRun,
    state: {
      status: record.status,
      reason: record.statusReason,
      backfill: { seen: record.backfillSeen, estimatedTotal: record.backfillTotal },
      lag: { events: lagEvents },
      watermark,
      watermarkDelaySeconds: record.watermark
        ? Math.max(0, Math.floor((now.getTime() - record.watermark.getTime()) / 1000))
        : null,
      lastSuccessAt: record.lastSuccessAt?.toISOString() ?? null,
      lastErrorCode: record.lastErrorCode,
    },
  };
}
