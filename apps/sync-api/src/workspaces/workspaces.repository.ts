import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyId, UserId, WorkspaceId } from '@syncline/core';
import { PrismaClient } from '@syncline/core/db';

export interface NewWorkspace {
  name: string;
  adminEmail: string;
  adminName: string | null;
  adminKey: { name: string; prefix: string; secretHash: Uint8Array };
}

export interface CreatedWorkspace {
  workspaceId: WorkspaceId;
  adminUserId: UserId;
  adminKeyId: ApiKeyId;
}

@Injectable()
export class WorkspacesRepository {
  constructor(@Inject(PrismaClient) private readonly prisma: PrismaClient) {}

  /** A workspace with its first admin and that admin's key, all or nothing. */
  async createWithAdmin(input: NewWorkspace): Promise<CreatedWorkspace> {
    return this.prisma.$transaction(async (tx) => {
      const workspace = await tx.workspace.create({ data: { name: input.name }, select: { id: true } });
      const admin = await tx.member.create({
        data: { workspaceId: workspace.id, email: input.adminEmail, name: input.adminName, role: 'admin' },
        select: { id: true },
      });
      const key = await tx.apiKey.create({
        data: {
          workspaceId: workspace.id,
          userId: admin.id,
          name: input.adminKey.name,
          role: 'admin',
          prefix: input.adminKey.prefix,
          secretHash: Uint8Array.from(input.adminKey.secretHash),
        },
        select: { id: true },
      });
      return {
        workspaceId: workspace.id as WorkspaceId,
        adminUserId: admin.id as UserId,
        adminKeyId: key.id as ApiKeyId,
      };
    });
  }
}
