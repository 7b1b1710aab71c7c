import { Button, Group, Text } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * The foot of a paged list: "Load more" while the API has a next page, else what the list
 * holds (`summary`). Takes the infinite query's own flags.
 */
export function LoadMore({
  query,
  summary,
}: {
  query: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
  summary: ReactNode;
}) {
  return (
    <Group justify="center">
      {query.hasNextPage ? (
        <Button
          variant="default"
          loading={query.isFetchingNextPage}
          onClick={() => void query.fetchNextPage()}
        >
          Load more
        </Button>
      ) : (
        <Text size="sm" c="dimmed">
          {summary}
        </Text>
      )}
    </Group>
  );
}
