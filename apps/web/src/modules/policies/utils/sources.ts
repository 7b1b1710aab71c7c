import { connectionName } from '../../connections/utils/connection-name';
import { USER_SOURCE } from './policy-draft';

/** What the page needs of a connection to name it and rank it. */
export interface SourceConnection {
  id: string;
  provider: string;
  externalAccountId: string;
  displayName: string | null;
  status: string;
}

export { connectionName };

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
