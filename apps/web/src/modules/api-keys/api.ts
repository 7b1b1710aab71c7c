import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type ApiKey = JsonOf<paths['/api/v1/api-keys']['get']['responses'][200]>['data'][number];
export type CreatedApiKey = JsonOf<paths['/api/v1/api-keys']['post']['responses'][201]>;
export type Role = ApiKey['role'];

export const apiKeyKeys = { all: ['api-keys'] as const };

export const apiKeysQuery = queryOptions({
  queryKey: apiKeyKeys.all,
  queryFn: ({ signal }) => unwrap(api.GET('/api/v1/api-keys', { signal })),
});

function useChanged() {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: apiKeyKeys.all });
    void client.invalidateQueries({ queryKey: ['audit-log'] });
  };
}

export function useCreateApiKey() {
  const changed = useChanged();
  return useMutation({
    mutationFn: (body: { name: string; role: Role }) => unwrap(api.POST('/api/v1/api-keys', { body })),
    onSuccess: changed,
  });
}

export function useRevokeApiKey() {
  const changed = useChanged();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id } } })),
    onSettled: changed,
  });
}
