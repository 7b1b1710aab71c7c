import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';

export interface NewMagicLink {
  tokenHash: Buffer;
  workspaceId: WorkspaceId;
  memberId: string;
  email: string;
  returnTo: string;
  expiresAt: Date;
}

export interface SpentMagicLink {
  workspaceId: WorkspaceId;
  memberId: string;
  returnTo: string;
}

@Injectable()
export class MagicLinksRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  async create(link: NewMagicLink): Promise<void> {
    await this.prisma.magicLink.create({
      data: { id: randomUUID(), ...link, tokenHash: Uint8Array.from(link.tokenHash) },
    });
  }

  /**
   * Spends the link in one statement, so two requests with the same token cannot both pass.
   * Unscoped on purpose: the token names its workspace. Null when used, expired or unknown.
   */
  async spend(tokenHash: Buffer, at: Date): Promise<SpentMagicLink | null> {
    const rows = await this.prisma.$queryRaw<{ workspaceId: string; memberId: string; returnTo: string }[]>`
      UPDATE magic_link SET used_at = ${at}
       WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${at}
      RETURNING workspace_id::text AS "workspaceId", member_id::text AS "memberId", return_to AS "returnTo"`;
    const row = rows[0];
    return row
      ? { workspaceId: row.workspaceId as WorkspaceId, memberId: row.memberId, returnTo: row.returnTo }
      : null;
  }
}
