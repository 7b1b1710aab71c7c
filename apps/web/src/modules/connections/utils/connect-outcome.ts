/** The connections page's search params: how a consent at the provider ended. */
export interface ConnectionsSearch {
  /** Ids of the connections the consent made or reconnected. */
  connected?: string[];
  /** The API's code for a refused consent. */
  oauthError?: string;
  /** The consent was a reconnect of connections that exist (set in the connect's returnTo). */
  reconnect?: true;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CODE = /^[a-z_]{1,64}$/;

/** Leniently: ids that are not ids and codes that are not codes are dropped, never an error page. */
export function parseConnectionsSearch(raw: Record<string, unknown>): ConnectionsSearch {
  const search: ConnectionsSearch = {};
  const connected = Array.isArray(raw.connected)
    ? raw.connected.filter((id): id is string => typeof id === 'string')
    : typeof raw.connected === 'string'
      ? raw.connected.split(',')
      : [];
  const ids = connected.map((id) => id.trim().toLowerCase()).filter((id) => UUID.test(id));
  if (ids.length > 0) search.connected = [...new Set(ids)];
  if (typeof raw.oauthError === 'string' && CODE.test(raw.oauthError)) search.oauthError = raw.oauthError;
  if (raw.reconnect === 1 || raw.reconnect === '1' || raw.reconnect === true) search.reconnect = true;
  return search;
}

/** What to tell an admin whose connect was refused, and what to do next. */
export function oauthErrorMessage(code: string): { title: string; message: string } {
  switch (code) {
    case 'oauth_consent_denied':
      return {
        title: 'Access was not granted',
        message:
          'The consent page was declined, or some access was left out (each product needs its own). Connect again and allow everything it asks for.',
      };
    case 'oauth_state_invalid':
      return {
        title: 'The connect expired or was opened elsewhere',
        message:
          'A connect must be finished within 10 minutes, in the browser it was started in, once. Start it again from this page.',
      };
    case 'oauth_failed':
      return {
        title: 'The provider refused the connect',
        message:
          'It ended the authorization with an error. Try again; if it keeps failing, check the app is installed in that account.',
      };
    case 'forbidden':
      return {
        title: 'You are no longer allowed to connect systems',
        message: 'Only admins can connect systems. Ask an admin of this workspace.',
      };
    case 'connection_disconnected':
      return {
        title: 'That account was disconnected for good',
        message: 'This workspace disconnected that account earlier, so it cannot be connected again here.',
      };
    case 'unavailable':
      return {
        title: 'The provider could not be reached',
        message: 'Nothing was connected. Wait a minute and connect again.',
      };
    default:
      return {
        title: 'Nothing was connected',
        message: `The connect was refused (${code}). Try again; if it keeps failing, check Sync health.`,
      };
  }
}
