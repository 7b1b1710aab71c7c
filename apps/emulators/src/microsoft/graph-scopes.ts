/**
 * The delegated permissions Graph asks of a token, per area of the mailbox: a read needs the
 * area's Read or ReadWrite scope, anything else its ReadWrite scope. Without it Graph answers
 * 403 ErrorAccessDenied: a connector that forgot a scope at consent fails here as it would
 * against Microsoft.
 */
interface Area {
  paths: readonly string[];
  read: string;
  write: string;
}

const AREAS: readonly Area[] = [
  {
    paths: ['/v1.0/me/events', '/v1.0/me/calendarview', '/v1.0/me/calendar'],
    read: 'Calendars.Read',
    write: 'Calendars.ReadWrite',
  },
  { paths: ['/v1.0/me/messages', '/v1.0/me/mailfolders'], read: 'Mail.Read', write: 'Mail.ReadWrite' },
  { paths: ['/v1.0/me/todo'], read: 'Tasks.Read', write: 'Tasks.ReadWrite' },
  // The user's own profile and tenant (after the mailbox areas: `find` takes the first match).
  { paths: ['/v1.0/me', '/v1.0/organization'], read: 'User.Read', write: 'User.ReadWrite' },
];

const areaOf = (path: string): Area | undefined => {
  const lower = path.toLowerCase();
  return AREAS.find((area) =>
    area.paths.some((p) => lower === p || (lower.startsWith(p) && '/(?'.includes(lower[p.length] ?? ''))),
  );
};

/**
 * The scopes of which a request needs one, or undefined where no mailbox area is touched.
 * A subscription needs read access to the resource it watches.
 */
export function scopesNeeded(method: string, url: string, body: unknown): string[] | undefined {
  const path = url.split('?')[0] ?? url;
  if (path.toLowerCase() === '/v1.0/subscriptions' && method === 'POST') {
    const resource = (body as { resource?: unknown } | undefined)?.resource;
    if (typeof resource !== 'string') return undefined;
    const area = areaOf(`/v1.0/${resource.replace(/^\//, '')}`);
    return area === undefined ? undefined : [area.read, area.write];
  }
  const area = areaOf(path);
  if (area === undefined) return undefined;
  return method === 'GET' || method === 'HEAD' ? [area.read, area.write] : [area.write];
}

/** Whether the granted scopes (any case) hold one of `anyOf`. */
export const holdsScope = (granted: readonly string[], anyOf: readonly string[]): boolean => {
  const held = new Set(granted.map((s) => s.toLowerCase()));
  return anyOf.some((s) => held.has(s.toLowerCase()));
};
