import type { paths } from '../../../api/schema';

export type AuditAction = NonNullable<
  NonNullable<paths['/api/v1/audit-log']['get']['parameters']['query']>['action']
>;

/** Every action, as a sentence's verb phrase, grouped by what it acts on (the filter's groups). */
export const ACTION_LABELS: Readonly<Record<AuditAction, string>> = {
  'connection.created': 'Connected a system',
  'connection.credentials_replaced': 'Replaced credentials',
  'connection.oauth_connected': 'Connected through OAuth',
  'connection.paused': 'Paused a connection',
  'connection.resumed': 'Resumed a connection',
  'connection.resync_requested': 'Asked for a resync',
  'connection.disconnected': 'Disconnected',
  'connection.enabled': 'Enabled after a dry run',
  'connection.mappings_replaced': 'Changed field mappings',
  'dead_letter.retried': 'Retried a dead letter',
  'dead_letter.discarded': 'Discarded a dead letter',
  'field_policy.replaced': 'Changed field policies',
  'replay.requested': 'Started a replay',
  'member.invited': 'Invited a member',
  'member.role_changed': "Changed a member's role",
  'member.removed': 'Removed a member',
  'api_key.created': 'Created an API key',
  'api_key.revoked': 'Revoked an API key',
  'workspace.time_zone_changed': 'Changed the time zone',
};

export const ACTION_GROUPS: Readonly<Record<string, string>> = {
  connection: 'Connections',
  dead_letter: 'Dead letters',
  field_policy: 'Policies',
  replay: 'Replays',
  member: 'Members',
  api_key: 'API keys',
  workspace: 'Workspace',
};

export type ActorKind = 'member' | 'apiKey';

export interface AuditSearch {
  action?: AuditAction;
  /** `member:<id>` or `apiKey:<id>`. */
  actor?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const actorValue = (kind: ActorKind, id: string): string => `${kind}:${id.toLowerCase()}`;

/** An actor filter value as the API's two params; undefined when it is not one. */
export function parseActor(value: string | undefined): { actorKind: ActorKind; actorId: string } | undefined {
  if (value === undefined) return undefined;
  const [kind, id, ...rest] = value.split(':');
  if (rest.length > 0 || (kind !== 'member' && kind !== 'apiKey') || id === undefined || !UUID.test(id))
    return undefined;
  return { actorKind: kind, actorId: id.toLowerCase() };
}

/** Parses the URL's search leniently: what it cannot read is dropped, never an error page. */
export function parseAuditSearch(raw: Record<string, unknown>): AuditSearch {
  const search: AuditSearch = {};
  if (typeof raw.action === 'string' && Object.hasOwn(ACTION_LABELS, raw.action))
    search.action = raw.action as AuditAction;
  if (typeof raw.actor === 'string') {
    const actor = parseActor(raw.actor);
    if (actor !== undefined) search.actor = actorValue(actor.actorKind, actor.actorId);
  }
  return search;
}

/** The list query the API takes for a page's search. */
export function toAuditQuery(search: AuditSearch): {
  action?: AuditAction;
  actorKind?: ActorKind;
  actorId?: string;
} {
  return { ...(search.action ? { action: search.action } : {}), ...parseActor(search.actor) };
}

/** An action's label; an action this build does not know yet as the API spells it. */
export const actionLabel = (action: string): string =>
  Object.hasOwn(ACTION_LABELS, action) ? ACTION_LABELS[action as AuditAction] : action;

/** The entry's details as "key: value" lines, in a stable order. */
export function detailLines(details: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(details)
    .sort()
    .map((key) => `${key}: ${details[key] === null ? '—' : String(details[key])}`);
}
