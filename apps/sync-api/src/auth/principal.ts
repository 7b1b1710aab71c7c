import type { ApiKeyId, WorkspaceId } from '@syncline/core';

export const ROLES = ['admin', 'sales'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling: the API key that authenticated the request, and the workspace it belongs to. */
export interface Principal {
  workspaceId: WorkspaceId;
  apiKeyId: ApiKeyId;
  role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by ApiKeyGuard on every authenticated request. */
    principal?: Principal;
  }
}
