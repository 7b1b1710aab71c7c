import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { ApiKeyId } from '@syncline/core';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { AuditLogService } from '../admin/audit-log.service';
import { generateApiKey, parseBearerApiKey, verifyApiKeySecret } from '../auth/api-key-format';
import type { Principal } from '../auth/principal';
import { ApiKeyCache } from './api-key-cache';
import { type ApiKeyRecord, ApiKeysRepository } from './api-keys.repository';
import type { ApiKeyView, CreateApiKeyBody, CreatedApiKeyView } from './api-keys.schemas';

// lastUsedAt is for humans deciding which keys to revoke; minute precision is plenty and
// spares a write on every request.
const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly cache: ApiKeyCache,
    @Inject(AuditLogService) private readonly audit: AuditLogService,
    @InjectPinoLogger(ApiKeysService.name) private readonly logger: PinoLogger,
  ) {}

  /** The principal for an `Authorization` header, or null for a missing, unknown or revoked key. */
  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    const presented = parseBearerApiKey(authorization);
    if (!presented) return null;
    const generation = this.cache.generation;
    let credential = this.cache.get(presented.prefix);
    if (!credential) {
      // An unknown prefix is answered from memory, with the same hash and comparison as a
      // known one, so a stream of made-up keys costs PostgreSQL one lookup per prefix.
      if (this.cache.isAbsent(presented.prefix)) return refuse(presented.secret);
      credential = (await this.apiKeys.findCredentialByPrefix(presented.prefix)) ?? undefined;
      if (credential) this.cache.put(credential, generation);
      else this.cache.putAbsent(presented.prefix);
    }
    if (!credential) return refuse(presented.secret);
    if (!verifyApiKeySecret(presented.secret, credential.secretHash)) return null;
    if (credential.revokedAt) return null;

    const now = new Date();
    const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    if (!credential.lastUsedAt || credential.lastUsedAt < staleBefore) {
      await this.apiKeys.touchLastUsed(credential.id, now, staleBefore);
      this.cache.touched(credential.prefix, now);
    }
    return {
      workspaceId: credential.workspaceId,
      role: credential.role,
      actor: { kind: 'apiKey', id: credential.id },
    };
  }

  async create(principal: Principal, body: CreateApiKeyBody): Promise<CreatedApiKeyView> {
    const generated = generateApiKey();
    const record = await this.apiKeys.create(
      {
        workspaceId: principal.workspaceId,
        name: body.name,
        role: body.role,
        prefix: generated.prefix,
        secretHash: generated.secretHash,
      },
      (tx, key) =>
        this.audit.record(principal, 'api_key.created', key.id, { name: key.name, role: key.role }, tx),
    );
    this.cache.created(generated.prefix);
    this.logger.info({ createdApiKeyId: record.id, role: record.role }, 'api key created');
    return { ...toView(record), key: generated.key };
  }

  async list(principal: Principal): Promise<{ data: ApiKeyView[] }> {
    const records = await this.apiKeys.list(principal.workspaceId);
    return { data: records.map(toView) };
  }

  async revoke(principal: Principal, id: string): Promise<void> {
    const revoked = await this.apiKeys.revoke(principal.workspaceId, id as ApiKeyId, new Date(), (tx, key) =>
      this.audit.record(principal, 'api_key.revoked', id, { name: key.name, role: key.role }, tx),
    );
    if (!revoked.ok) throw new NotFoundException(`no API key ${id}`);
    // This process drops it now; the others when they hear the notification.
    if (revoked.value.prefix) this.cache.forget(revoked.value.prefix);
    this.logger.info({ revokedApiKeyId: id }, 'api key revoked');
  }
}

/** Nothing a secret hashes to: what a key that does not exist is compared with. */
const NO_KEY_HASH = Buffer.alloc(32);

/** Null, after the work a wrong secret costs (hashed and compared), so both take the same time. */
function refuse(secret: string): null {
  verifyApiKeySecret(secret, NO_KEY_HASH);
  return null;
}

function toView(record: ApiKeyRecord): ApiKeyView {
  return {
    id: record.id,
    name: record.name,
    role: record.role,
    prefix: record.prefix,
    createdAt: record.createdAt.toISOString(),
    lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
    revokedAt: record.revokedAt?.toISOString() ?? null,
  };
}
