import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type MappingsView = JsonOf<paths['/api/v1/connections/{id}/mappings']['get']['responses'][200]>;
export type FieldMapping = MappingsView['mappings'][number];
export type FieldInForce = NonNullable<MappingsView['fields'][string]>[number];
export type EntityType = FieldMapping['entityType'];
export type PropertyList = JsonOf<
  paths['/api/v1/connections/{id}/mappings/properties']['get']['responses'][200]
>;
export type PortalProperty = PropertyList['properties'][number];
export type RevisionPage = JsonOf<
  paths['/api/v1/connections/{id}/mappings/revisions']['get']['responses'][200]
>;
export type Revision = RevisionPage['data'][number];

export const mappingKeys = {
  all: (id: string) => ['mappings', id] as const,
  view: (id: string) => ['mappings', id, 'view'] as const,
  properties: (id: string, entityType: string) => ['mappings', id, 'properties', entityType] as const,
  revisions: (id: string) => ['mappings', id, 'revisions'] as const,
  connection: (id: string) => ['mappings', id, 'connection'] as const,
};

export const mappingsQuery = (id: string) =>
  queryOptions({
    queryKey: mappingKeys.view(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/connections/{id}/mappings', { params: { path: { id } }, signal })),
  });

/** The connection itself, for its name. */
export const connectionQuery = (id: string) =>
  queryOptions({
    queryKey: mappingKeys.connection(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/v1/connections/{id}', { params: { path: { id } }, signal })),
    staleTime: 60_000,
  });

/** The portal's properties of one type, read from the provider by the API (a minute is fresh enough). */
export const propertiesQuery = (id: string, entityType: EntityType) =>
  queryOptions({
    queryKey: mappingKeys.properties(id, entityType),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/v1/connections/{id}/mappings/properties', {
          params: { path: { id }, query: { entityType } },
          signal,
        }),
      ),
    staleTime: 60_000,
  });

export const revisionsQuery = (id: string) =>
  infiniteQueryOptions({
    queryKey: mappingKeys.revisions(id),
    queryFn: ({ pageParam, signal }) =>
      unwrap(
        api.GET('/api/v1/connections/{id}/mappings/revisions', {
          params: { path: { id }, query: { limit: 20, cursor: pageParam } },
          signal,
        }),
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
  });

/** Members by id, to say who replaced a revision. */
export const membersQuery = () =>
  queryOptions({
    queryKey: ['members'] as const,
    queryFn: ({ signal }) => unwrap(api.GET('/api/v1/members', { signal })),
    staleTime: 60_000,
  });

export interface SaveVariables {
  mappings: FieldMapping[];
  /** The version the edit started from: `If-Match`, so a change made meanwhile is a 412, not lost. */
  version: number;
}

export function useSaveMappings(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ mappings, version }: SaveVariables) =>
      unwrap(
        api.PUT('/api/v1/connections/{id}/mappings', {
          params: { path: { id } },
          body: { mappings },
          headers: { 'If-Match': `"${version}"` },
        }),
      ),
    onSuccess: (view) => {
      client.setQueryData(mappingKeys.view(id), view);
      void client.invalidateQueries({ queryKey: mappingKeys.revisions(id) });
    },
  });
}
