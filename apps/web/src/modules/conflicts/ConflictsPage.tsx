import { Skeleton, Stack, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { LoadMore } from '../../ui/LoadMore';
import { openConflictsQuery, useResolveConflict } from './api';
import { ConflictCard } from './components/ConflictCard';

/** The conflicts inbox: values edited in two places, waiting for a person to choose. */
export function ConflictsPage() {
  const list = useInfiniteQuery(openConflictsQuery());
  const resolve = useResolveConflict();
  const [errors, setErrors] = useState<Record<string, unknown>>({});
  const conflicts = list.data?.pages.flatMap((page) => page.data) ?? [];

  return (
    <Stack gap="md">
      <Title order={1}>Conflicts</Title>
      {list.isPending ? (
        <Stack gap="md" role="status" aria-busy="true" aria-label="Loading conflicts">
          <Skeleton height={180} />
          <Skeleton height={180} />
        </Stack>
      ) : list.isError && conflicts.length === 0 ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : conflicts.length === 0 ? (
        <EmptyState title="No open conflicts">
          When a field is changed in two places and its policy asks for a person, it waits here. Nothing needs
          you now.
        </EmptyState>
      ) : (
        <>
          {conflicts.map((conflict) => (
            <ConflictCard
              key={conflict.id}
              conflict={conflict}
              error={errors[conflict.id]}
              resolving={resolve.isPending && resolve.variables?.conflict.id === conflict.id}
              onResolve={(value) => {
                setErrors(({ [conflict.id]: _, ...rest }) => rest);
                resolve.mutate(
                  { conflict, value },
                  {
                    onSuccess: (outcome) =>
                      notifications.show({
                        color: 'green',
                        title: 'Conflict resolved',
                        message: outcome.settled
                          ? 'The value is saved and on its way to every connected system.'
                          : 'Accepted; the record shows it in a moment.',
                      }),
                    onError: (error) => setErrors((current) => ({ ...current, [conflict.id]: error })),
                  },
                );
              }}
            />
          ))}
          <LoadMore query={list} summary={<>{conflicts.length} open</>} />
        </>
      )}
    </Stack>
  );
}
