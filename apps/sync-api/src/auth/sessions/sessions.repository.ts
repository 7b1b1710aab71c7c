import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';
import { Pool } from 'pg';
import { READ_POOL } from '../../infra/database.module';
import type { Role } from '../principal';

export type MemberId = string & { readonly __brand: 'MemberId' };
export type SessionId = string & { readonly __brand: 'SessionId' };

/** A live session with its member as they are now (role, removal). */
export interface SessionRecord {
  id: SessionId;
  workspaceId: WorkspaceId;
  memberId: MemberId;
  role: Role;
  csrfSecret: string;
  lastSeenAt: Date;
}

export interface NewSession {
  workspaceId: WorkspaceId;
  memberId: MemberId;
  tokenHash: Buffer;
  csrfSecret: string;
  expiresAt: Date;
}

@Injectable()
export class SessionsRepository {
  constructor(
    @Inject(PrismaClient) private readonly prisma: PrismaClient,
    @Inject(READ_POOL) private readonly pool: Pool,
  ) {}

  /**
   * The session, in the same step as its signing in: the member (active, or invited and now
   * accepting) records the sign-in. Null when the member is not in this workspace or removed.
   */
  async create(session: NewSession, at: Date): Promise<SessionId | null> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      WITH signed_in AS (
        UPDATE member SET last_sign_in_at = ${at}, status = 'active'
         WHERE id = ${session.memberId}::uuid AND workspace_id = ${session.workspaceId}::uuid
           AND removed_at IS NULL
        RETURNING id, workspace_id
      )
      INSERT INTO user_session (id, workspace_id, member_id, token_hash, csrf_secret, created_at, last_seen_at, expires_at)
      SELECT ${randomUUID()}::uuid, workspace_id, id, ${session.tokenHash}, ${session.csrfSecret}, ${at}, ${at}, ${session.expiresAt}
        FROM signed_in
      RETURNING id::text AS id`;
    return (rows[0]?.id as SessionId | undefined) ?? null;
  }

  /**
   * Unscoped on purpose: the cookie says which workspace it belongs to. Run on every
   * cookie-authenticated request, through `pg`; never cached, so a revocation or removal
   * holds from the next request.
   */
  async findLive(tokenHash: Buffer, idleSince: Date, now: Date): Promise<SessionRecord | null> {
    const { rows } = await this.pool.query<{
      id: string;
      workspaceId: string;
      memberId: string;
      role: Role;
      csrfSecret: string;
      lastSeenAt: Date;
    }>({
      name: 'sessions.live-by-hash',
      text: `SELECT s.id::text AS id, s.workspace_id::text AS "workspaceId", s.member_id::text AS "memberId",
              m.role::text AS role, s.csrf_secret AS "csrfSecret", s.last_seen_at AS "lastSeenAt"
         FROM user_session s
         JOIN member m ON m.id = s.member_id AND m.workspace_id = s.workspace_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $3
          AND s.last_seen_at > $2 AND m.removed_at IS NULL`,
      values: [tokenHash, idleSince, now],
    });
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id as SessionId,
      workspaceId: row.workspaceId as WorkspaceId,
      memberId: row.memberId as MemberId,
      role: row.role,
      csrfSecret: row.csrfSecret,
      lastSeenAt: row.lastSeenAt,
    };
  }

  /** The session's CSRF secret, while it is not revoked. */
  async csrfSecretOf(workspaceId: WorkspaceId, id: SessionId): Promise<string | null> {
    const row = await this.prisma.userSession.findFirst({
      where: { id, workspaceId, revokedAt: null },
      select: { csrfSecret: true },
    });
    return row?.csrfSecret ?? null;
  }

  /** Renews the idle expiry, unless another request did within the window. */
  async touch(workspaceId: WorkspaceId, id: SessionId, at: Date, staleBefore: Date): Promise<void> {
    await this.pool.query({
      name: 'sessions.touch',
      text: `UPDATE user_session SET last_seen_at = $3
              WHERE id = $1 AND workspace_id = $2 AND last_seen_at < $4 AND revoked_at IS NULL`,
      values: [id, workspaceId, at, staleBefore],
    });
  }

  async revoke(workspaceId: WorkspaceId, id: SessionId, at: Date): Promise<void> {
    await this.prisma.userSession.updateMany({
      where: { id, workspaceId, revokedAt: null },
      data: { revokedAt: at },
    });
  }

  /** The session this cookie names, whoever's it is (the browser signing in again replaces it). */
  async revokeByTokenHash(tokenHash: Buffer, at: Date): Promise<void> {
    await this.prisma.userSession.updateMany({
      where: { tokenHash: Uint8Array.from(tokenHash), revokedAt: null },
      data: { revokedAt: at },
    });
  }

  /** Every session of the member, e.g. at their removal. */
  async revokeAllOf(workspaceId: WorkspaceId, memberId: MemberId, at: Date): Promise<number> {
    const revoked = await this.prisma.userSession.updateMany({
      where: { workspaceId, memberId, revokedAt: null },
      data: { revokedAt: at },
    });
    return revoked.count;
  }
}
