import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : never;
export type Member = JsonOf<paths['/api/v1/members']['get']['responses'][200]>['data'][number];
export type Role = Member['role'];

export const memberKeys = { all: ['members'] as const };

export const membersQuery = queryOptions({
  queryKey: memberKeys.all,
  queryFn: ({ signal }) => unwrap(api.GET('/api/v1/members', { signal })),
});

function useChanged() {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: memberKeys.all });
    void client.invalidateQueries({ queryKey: ['audit-log'] });
  };
}

export function useInviteMember() {
  const changed = useChanged();
  return useMutation({
    mutationFn: (body: { email: string; name?: string; role: Role }) =>
      unwrap(api.POST('/api/v1/members', { body })),
    onSuccess: changed,
  });
}

export function useChangeRole() {
  const changed = useChanged();
  return useMutation({
    mutationFn: ({ id, role }: { id: string; role: Role }) =>
      unwrap(api.PATCH('/api/v1/members/{id}', { params: { path: { id } }, body: { role } })),
    onSettled: changed,
  });
}

export function useRemoveMember() {
  const changed = useChanged();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/members/{id}', { params: { path: { id } } })),
    onSettled: changed,
  });
}
