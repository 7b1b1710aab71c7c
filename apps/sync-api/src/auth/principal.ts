import type { WorkspaceId } from '@syncline/core';
import type { SessionId } from './sessions/sessions.repository';

export const ROLES = ['admin', 'sales'] as const;
export type Role = (typeof ROLES)[number];

export const ACTOR_KINDS = ['member', 'apiKey'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** Who acts: a signed-in member, or an API key. */
export interface Actor {
  kind: ActorKind;
  id: string;
}

/**
 * Who is calling: the member (by their session cookie) or the API key (by its Bearer header)
 * that authenticated the request, the workspace it belongs to, and its role now.
 */
export interface Principal {
  workspaceId: WorkspaceId;
  role: Role;
  actor: Actor;
  /** Set when the request came with a session cookie. */
  sessionId?: SessionId;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by AuthGuard on every authenticated request. */
    principal?: Principal;
  }
}
