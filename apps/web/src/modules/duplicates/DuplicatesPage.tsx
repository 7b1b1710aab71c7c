import { Card, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { AnchorLink } from '../../ui/AnchorLink';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { LoadMore } from '../../ui/LoadMore';
import { StatusBadge } from '../../ui/StatusBadge';
import { relativeTime } from '../../ui/utils/time';
import { type Duplicate, openDuplicatesQuery } from './api';
import { evidenceText } from './utils/evidence';

const TYPE_WORD: Record<string, string> = { person: 'People', company: 'Companies', deal: 'Deals' };

function DuplicateRow({ pair }: { pair: Duplicate }) {
  const title = `${pair.a.displayName ?? 'Unnamed'} and ${pair.b.displayName ?? 'Unnamed'}`;
  return (
    <Card withBorder padding="sm" radius="md" component="li">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Stack gap={2} style={{ flex: '1 1 220px', minWidth: 0, overflowWrap: 'anywhere' }}>
          <AnchorLink to="/duplicates/$id" params={{ id: pair.id }} fw={600}>
            {title}
          </AnchorLink>
          <Text size="xs" c="dimmed" lineClamp={2}>
            {pair.evidence.slice(0, 3).map(evidenceText).join(' · ') || 'Alike, without a shared key'} · found{' '}
            {relativeTime(pair.createdAt)}
          </Text>
        </Stack>
        <Group gap="xs">
          <StatusBadge label={TYPE_WORD[pair.entityType] ?? pair.entityType} />
          <StatusBadge
            label={`${Math.round(pair.score * 100)}% alike`}
            tone={pair.score >= 0.8 ? 'warning' : 'info'}
          />
        </Group>
      </Group>
    </Card>
  );
}

/** Pairs identity found alike but not sure enough to merge, the likeliest first. */
export function DuplicatesPage() {
  const list = useInfiniteQuery(openDuplicatesQuery());
  const pairs = list.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <Stack gap="md">
      <Title order={1}>Possible duplicates</Title>
      {list.isPending ? (
        <Stack gap="sm" role="status" aria-busy="true" aria-label="Loading possible duplicates">
          {Array.from({ length: 4 }, (_, i) => (
            <Skeleton key={i} height={72} />
          ))}
        </Stack>
      ) : list.isError && pairs.length === 0 ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : pairs.length === 0 ? (
        <EmptyState title="No possible duplicates">
          Records that look alike but share no address, phone or domain wait here for a person to decide. None
          do now.
        </EmptyState>
      ) : (
        <>
          <Stack
            component="ul"
            gap="sm"
            p={0}
            m={0}
            style={{ listStyle: 'none' }}
            aria-label="Pairs to review"
          >
            {pairs.map((pair) => (
              <DuplicateRow key={pair.id} pair={pair} />
            ))}
          </Stack>
          <LoadMore query={list} summary={<>{pairs.length} to review</>} />
        </>
      )}
    </Stack>
  );
}
