/**
 * Provider keys, spelled the same everywhere: connector folder, enum value on the wire,
 * webhook route. (The database enum stores them with hyphens too; Prisma's identifiers
 * spell them with underscores.)
 */
export const PROVIDER_KEYS = [
  'hubspot',
  'google-calendar',
  'gmail',
  'google-tasks',
  'microsoft-calendar',
  'microsoft-mail',
  'microsoft-todo',
] as const;
export type ProviderKey = (typeof PROVIDER_KEYS)[number];

/**
 * The provider of each workspace's own connection: edits its people make in Syncline are
 * changes of that connection on the log. It is no provider to pull from or write to, so it
 * is not among PROVIDER_KEYS, and every query that picks connections to sync leaves it out.
 */
export const INTERNAL_PROVIDER = 'syncline';

/** A connection's lifecycle (the `connection_status` enum), as the API and the workers read it. */
export const CONNECTION_STATUSES = [
  'pending',
  'backfilling',
  'live',
  'paused',
  'needs_reauth',
  'error',
  'disconnected',
] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
