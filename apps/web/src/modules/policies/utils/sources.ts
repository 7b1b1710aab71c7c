import { USER_SOURCE } from './policy-draft';

/** What the page needs of a connection to name it and rank it. */
export interface SourceConnection {
  id: string;
  provider: string;
  externalAccountId: string;
  displayName: string | null;
  status: string;
}

const PROVIDER_NAMES: Record<string, string> = {
  hubspot: 'HubSpot',
  'google-calendar': 'Google Calendar',
  gmail: 'Gmail',
  'google-tasks': 'Google Tasks',
};

/** A connection as the rest of the app names it: the name it was given, else its provider and account. */
export const connectionName = (c: SourceConnection): string =>
  c.displayName ?? `${PROVIDER_NAMES[c.provider] ?? c.provider} ${c.externalAccountId}`;

export const USER_SOURCE_NAME = 'People editing in Syncline';

/** Names every source a policy or a report can mention; an unknown id reads as a removed connection. */
export function sourceNamer(connections: readonly SourceConnection[]): (source: string) => string {
  const names = new Map(connections.map((c) => [c.id.toLowerCase(), connectionName(c)]));
  return (source) =>
    source === USER_SOURCE
      ? USER_SOURCE_NAME
      : (names.get(source.toLowerCase()) ?? `Removed connection ${source.slice(0, 8)}`);
}

/** The sources a new priority order starts with: the live connections, oldest first, then people. */
export const rankableSources = (connections: readonly SourceConnection[]): string[] => [
  ...connections.filter((c) => c.status !== 'disconnected').map((c) => c.id.toLowerCase()),
  USER_SOURCE,
];
