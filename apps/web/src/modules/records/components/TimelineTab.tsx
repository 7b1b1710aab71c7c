import { Badge, Button, Chip, Group, Skeleton, Stack, Text } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { EmptyState } from '../../../ui/EmptyState';
import { ErrorState } from '../../../ui/ErrorState';
import { formatDateTime } from '../../../ui/utils/time';
import { type RecordType, TIMELINE_TYPES, type TimelineItem, type TimelineType, timelineQuery } from '../api';
import { providerName } from '../utils/format';

/** What the record was in the activity, in words. */
const ROLE_WORDS: Record<TimelineItem['roles'][number], string> = {
  organizer: 'organizer',
  attendee: 'attendee',
  from: 'sender',
  to: 'recipient',
  cc: 'in copy',
  bcc: 'in blind copy',
};

const TYPE_WORDS: Record<TimelineType, { chip: string; row: string }> = {
  meeting: { chip: 'Meetings', row: 'Meeting' },
  email_activity: { chip: 'Mails', row: 'Mail' },
  task: { chip: 'Tasks', row: 'Task' },
};

function TimelineRow({ item }: { item: TimelineItem }) {
  const sources = [...new Set(item.sourceLinks.map((link) => providerName(link.provider)))];
  return (
    <Stack
      component="li"
      gap={2}
      py="xs"
      style={{ listStyle: 'none', borderBottom: '1px solid var(--mantine-color-default-border)' }}
    >
      <Group gap="xs" wrap="wrap">
        <Badge size="sm" variant="light" color="gray" c="gray.9" tt="none">
          {TYPE_WORDS[item.type].row}
        </Badge>
        <Text size="sm" fw={600} style={{ overflowWrap: 'anywhere' }}>
          {item.title ?? '(no title)'}
        </Text>
      </Group>
      <Text size="xs" c="dimmed">
        <time dateTime={item.occurredAt}>{formatDateTime(item.occurredAt)}</time>
        {item.roles.length > 0 && ` · ${item.roles.map((role) => ROLE_WORDS[role]).join(', ')}`}
        {sources.length > 0 && ` · in ${sources.join(', ')}`}
      </Text>
    </Stack>
  );
}

/** Meetings, mails and tasks, newest first: pages load as the end comes into view, or with "Load more". */
export function TimelineTab({ type, id }: { type: RecordType; id: string }) {
  const [types, setTypes] = useState<TimelineType[]>([...TIMELINE_TYPES]);
  const query = useInfiniteQuery({ ...timelineQuery(type, id, types), enabled: types.length > 0 });
  const sentinel = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = query;

  useEffect(() => {
    const element = sentinel.current;
    if (element === null || !hasNextPage || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting) && !isFetchingNextPage) void fetchNextPage();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  const items = query.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <Stack gap="sm">
      <Chip.Group multiple value={types} onChange={(value) => setTypes(value as TimelineType[])}>
        <Group gap="xs" role="group" aria-label="Show activity types">
          {TIMELINE_TYPES.map((timelineType) => (
            <Chip key={timelineType} value={timelineType} size="sm">
              {TYPE_WORDS[timelineType].chip}
            </Chip>
          ))}
        </Group>
      </Chip.Group>
      {types.length === 0 ? (
        <EmptyState title="No activity types chosen">Choose meetings, mails or tasks above.</EmptyState>
      ) : query.isPending ? (
        <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading the timeline">
          {[0, 1, 2, 3].map((n) => (
            <Skeleton key={n} height={44} />
          ))}
        </Stack>
      ) : query.isError && items.length === 0 ? (
        <ErrorState error={query.error} onRetry={() => void query.refetch()} />
      ) : items.length === 0 ? (
        <EmptyState title="No activity yet">
          Meetings and mails appear here once a calendar or mailbox with this {type}'s addresses is connected.
        </EmptyState>
      ) : (
        <>
          <Stack component="ul" gap={0} p={0} m={0} aria-label="Timeline">
            {items.map((item) => (
              <TimelineRow key={item.id} item={item} />
            ))}
          </Stack>
          <div ref={sentinel} aria-hidden />
          {hasNextPage && (
            <Group justify="center">
              <Button
                variant="default"
                size="xs"
                onClick={() => void fetchNextPage()}
                loading={isFetchingNextPage}
              >
                Load more
              </Button>
            </Group>
          )}
          {query.isFetchNextPageError && (
            <ErrorState error={query.error} onRetry={() => void fetchNextPage()} />
          )}
        </>
      )}
    </Stack>
  );
}
