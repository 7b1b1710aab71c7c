import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';
import { adminAttentionQuery } from '../shell/api';
import { isBackfilling } from './utils/connection-status';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type Connection = JsonOf<paths['/api/v1/connections']['get']['responses'][200]>['data'][number];
export type SyncHealth = JsonOf<paths['/api/v1/health/sync']['get']['responses'][200]>;
export type ConnectionHealth = SyncHealth['connections'][number];
export type OAuthProvider = 'hubspot' | 'google' | 'microsoft';
export type GoogleProduct = 'google-calendar' | 'gmail' | 'google-tasks';
export type MicrosoftProduct = 'microsoft-calendar' | 'microsoft-mail' | 'microsoft-todo';
/** What one Google or Microsoft sign-in connects. */
export type OAuthProduct = GoogleProduct | MicrosoftProduct;

export const connectionKeys = {
  all: ['connections'] as const,
  overview: () => ['connections', 'overview'] as const,
};

/** How often the page asks again: every 2 s while a backfill runs, else every 10 s. */
export const POLL_BACKFILLING_MS = 2_000;
export const POLL_IDLE_MS = 10_000;

export interface ConnectionsOverview {
  connections: Connection[];
  /** Each connection's health (pending writes…), by id. */
  health: Record<string, ConnectionHealth>;
  checkedAt: string;
}

/** The connections and their sync health, read side by side. */
export const connectionsOverviewQuery = () =>
  queryOptions({
    queryKey: connectionKeys.overview(),
    queryFn: async ({ signal }): Promise<ConnectionsOverview> => {
      const [list, health] = await Promise.all([
        unwrap(api.GET('/api/v1/connections', { signal })),
        unwrap(api.GET('/api/v1/health/sync', { signal })),
      ]);
      return {
        connections: list.data,
        health: Object.fromEntries(health.connections.map((h) => [h.id, h])),
        checkedAt: health.checkedAt,
      };
    },
    refetchInterval: (query) =>
      query.state.data?.connections.some(isBackfilling) ? POLL_BACKFILLING_MS : POLL_IDLE_MS,
    staleTime: 1_000,
  });

function useInvalidateConnections() {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: connectionKeys.all });
    void client.invalidateQueries({ queryKey: adminAttentionQuery.queryKey });
  };
}

export type LifecycleAction = 'pause' | 'resume' | 'resync';

/** Pause, resume or resync one connection. */
export function useLifecycleAction() {
  const invalidate = useInvalidateConnections();
  return useMutation({
    mutationFn: ({ id, action }: { id: string; action: LifecycleAction }) => {
      const params = { params: { path: { id } } };
      switch (action) {
        case 'pause':
          return unwrap(api.POST('/api/v1/connections/{id}/pause', params));
        case 'resume':
          return unwrap(api.POST('/api/v1/connections/{id}/resume', params));
        case 'resync':
          return unwrap(api.POST('/api/v1/connections/{id}/resync', params));
      }
    },
    onSettled: invalidate,
  });
}

/** Disconnects for good: `keep` leaves what it brought in the records, `erase` removes what only it knew. */
export function useDisconnect() {
  const invalidate = useInvalidateConnections();
  return useMutation({
    mutationFn: ({ id, data }: { id: string; data: 'keep' | 'erase' }) =>
      unwrap(api.DELETE('/api/v1/connections/{id}', { params: { path: { id }, query: { data } } })),
    onSettled: invalidate,
  });
}

export interface StartOAuthInput {
  provider: OAuthProvider;
  products?: OAuthProduct[];
  dryRun: boolean;
  /** The app path the provider's redirect ends on. */
  returnTo: string;
}

/** Starts a consent at the provider; the caller sends the browser to `authorizeUrl`. */
export function useStartOAuth() {
  return useMutation({
    mutationFn: ({ provider, products, dryRun, returnTo }: StartOAuthInput) =>
      unwrap(
        api.POST('/api/v1/connections/oauth/{provider}/start', {
          params: { path: { provider } },
          body: { dryRun, returnTo, ...(products ? { products } : {}) },
        }),
      ),
  });
}

export interface TokenConnectInput {
  portalId: string;
  token: string;
  displayName?: string;
  dryRun: boolean;
}

/** Connects a HubSpot portal with a private app's token (no consent page). */
export function useConnectWithToken() {
  const invalidate = useInvalidateConnections();
  return useMutation({
    mutationFn: ({ portalId, token, displayName, dryRun }: TokenConnectInput) =>
      unwrap(
        api.POST('/api/v1/connections', {
          body: {
            provider: 'hubspot',
            externalAccountId: portalId,
            credentials: { privateAppToken: token },
            dryRun,
            ...(displayName ? { displayName } : {}),
          },
        }),
      ),
    onSettled: invalidate,
  });
}
