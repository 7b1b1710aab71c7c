/** The OpenID Connect scopes: they ask who the user is, not for access to Graph. */
export const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);

const GRAPH_RESOURCE = 'https://graph.microsoft.com/';

/**
 * A `scope` parameter as a list: Graph's scopes by their short name (`User.Read`, whether
 * sent bare or as `https://graph.microsoft.com/User.Read`), the OpenID ones in lower case,
 * each once (scopes compare case-insensitively).
 */
export function parseScopes(scope: string | undefined): string[] {
  const seen = new Set<string>();
  const scopes: string[] = [];
  for (const raw of (scope ?? '').split(/\s+/)) {
    if (raw === '') continue;
    const bare = raw.toLowerCase().startsWith(GRAPH_RESOURCE) ? raw.slice(GRAPH_RESOURCE.length) : raw;
    const name = OIDC_SCOPES.has(bare.toLowerCase()) ? bare.toLowerCase() : bare;
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    scopes.push(name);
  }
  return scopes;
}

/** The `scope` a token response reports: what the tokens are good for, offline_access aside. */
export const reportedScope = (scopes: readonly string[]): string =>
  scopes.filter((s) => s !== 'offline_access').join(' ');

/** Graph scopes asked for that the grant does not hold (a refresh may narrow, never widen). */
export function beyondGrant(requested: readonly string[], granted: readonly string[]): string[] {
  const held = new Set(granted.map((s) => s.toLowerCase()));
  return requested.filter((s) => !OIDC_SCOPES.has(s) && !held.has(s.toLowerCase()));
}

/** How the consent page words each permission, as Microsoft's does. */
const WORDING: Record<string, string> = {
  openid: 'Sign you in',
  profile: 'View your basic profile',
  email: 'View your email address',
  offline_access: 'Maintain access to data you have given it access to',
  'user.read': 'Sign you in and read your profile',
  'calendars.read': 'Read your calendars',
  'calendars.readwrite': 'Have full access to your calendars',
  'mail.read': 'Read your mail',
  'mail.readwrite': 'Read and write access to your mail',
  'mail.send': 'Send mail as you',
  'tasks.read': 'Read your tasks and task lists',
  'tasks.readwrite': 'Create, read, update, and delete your tasks and task lists',
};

export const describeScope = (scope: string): string => WORDING[scope.toLowerCase()] ?? scope;
