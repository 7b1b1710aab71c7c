import { z } from 'zod';
import { ACTOR_KINDS } from '../auth/principal';
import { nextCursorField, pageQuery } from './page-cursor';

/** Every action the audit log records, with the kind of row it acts on. */
export const AUDIT_ACTIONS = {
  'connection.created': 'connection',
  'connection.credentials_replaced': 'connection',
  'connection.oauth_connected': 'connection',
  'connection.paused': 'connection',
  'connection.resumed': 'connection',
  'connection.resync_requested': 'connection',
  'connection.disconnected': 'connection',
  'connection.enabled': 'connection',
  'connection.mappings_replaced': 'connection',
  'dead_letter.retried': 'dead_letter',
  'dead_letter.discarded': 'dead_letter',
  'field_policy.replaced': 'field_policy',
  'replay.requested': 'replay',
  'member.invited': 'member',
  'member.role_changed': 'member',
  'member.removed': 'member',
  'api_key.created': 'api_key',
  'api_key.revoked': 'api_key',
  'workspace.time_zone_changed': 'workspace',
} as const;
export type AuditAction = keyof typeof AUDIT_ACTIONS;
export const AUDIT_ACTION_NAMES = Object.keys(AUDIT_ACTIONS) as [AuditAction, ...AuditAction[]];
const TARGET_TYPES = [...new Set(Object.values(AUDIT_ACTIONS))] as [AuditTargetType, ...AuditTargetType[]];
export type AuditTargetType = (typeof AUDIT_ACTIONS)[AuditAction];

/**
 * Flat values only: a credentials object (or any nested body) cannot be passed in by
 * mistake, so no secret ends up in the trail.
 */
export type AuditDetails = Readonly<Record<string, string | number | boolean | null>>;

export const auditLogQuery = z.object({
  ...pageQuery,
  actorId: z
    .uuid()
    .optional()
    .describe('Only the entries of this actor (an API key, or a member with `actorKind=member`).'),
  actorKind: z.enum(ACTOR_KINDS).optional().describe('What `actorId` names; `apiKey` when absent.'),
  action: z.enum(AUDIT_ACTION_NAMES).optional().describe('Only the entries of this action.'),
});
export type AuditLogQuery = z.output<typeof auditLogQuery>;

export const auditEntryView = z.object({
  id: z.uuid(),
  action: z.enum(AUDIT_ACTION_NAMES),
  targetType: z.enum(TARGET_TYPES),
  targetId: z.string().nullable(),
  actor: z.object({
    kind: z.enum(ACTOR_KINDS).describe('A signed-in member, or an API key.'),
    id: z.uuid(),
    label: z.string().nullable().describe("The member's name (else email), or the key's name."),
    keyId: z.uuid().nullable().describe('The API key that made the request, when a key did.'),
    userId: z
      .uuid()
      .nullable()
      .describe("The member: the one signed in, or the key's own member when the key belongs to one."),
  }),
  details: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .describe('What the action changed, never credentials or tokens.'),
  createdAt: z.iso.datetime(),
});
export type AuditEntryView = z.output<typeof auditEntryView>;

export const auditLogPage = z.object({ data: z.array(auditEntryView), nextCursor: nextCursorField });
export type AuditLogPage = z.output<typeof auditLogPage>;
