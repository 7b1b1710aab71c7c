import { Injectable } from '@nestjs/common';
import type { WorkspaceId } from '@syncline/core';
import { generateApiKey } from '../auth/api-key-format';
import { normalizeEmail } from '../members/members.repository';
import { WorkspacesRepository } from './workspaces.repository';

export interface ProvisionedWorkspace {
  workspaceId: WorkspaceId;
  /** The admin's API key; this is the only time it exists in clear. */
  apiKey: string;
}

@Injectable()
export class WorkspacesService {
  constructor(private readonly workspaces: WorkspacesRepository) {}

  async provision(input: {
    name: string;
    adminEmail: string;
    adminName?: string | undefined;
  }): Promise<ProvisionedWorkspace> {
    const key = generateApiKey();
    const created = await this.workspaces.createWithAdmin({
      name: input.name,
      adminEmail: normalizeEmail(input.adminEmail),
      adminName: input.adminName ?? null,
      adminKey: { name: 'initial admin key', prefix: key.prefix, secretHash: key.secretHash },
    });
    return { workspaceId: created.workspaceId, apiKey: key.key };
  }
}
