import { Badge, Button, Group, List, Skeleton, Stack, Text, Title } from '@mantine/core';
import type { InfiniteData, UseInfiniteQueryResult } from '@tanstack/react-query';
import { fieldLabel } from '../../../lib/fields';
import { EmptyState } from '../../../ui/EmptyState';
import { ErrorState } from '../../../ui/ErrorState';
import { formatDateTime } from '../../../ui/utils/time';
import type { HistoryEntry, HistoryPage, IdentityEvent, RecordType } from '../api';
import { formatValue, providerName, reasonWords } from '../utils/format';

/** Who or which system made a change: the API's label ("HubSpot 1234", a member's name), else what is known. */
export function historySourceWords(source: HistoryEntry['source']): string {
  if (source.label) return source.label;
  if (source.kind === 'user') return source.name ?? `a person (${source.id.slice(0, 8)})`;
  const provider = providerName(source.provider);
  return source.name !== null && source.name !== provider ? `${provider} ${source.name}` : provider;
}

function ChangeRow({ type, entry }: { type: RecordType; entry: HistoryEntry }) {
  const fields = Object.entries(entry.fields);
  return (
    <Stack
      component="li"
      gap={4}
      py="xs"
      style={{ listStyle: 'none', borderBottom: '1px solid var(--mantine-color-default-border)' }}
    >
      <Group gap="xs" wrap="wrap">
        <Text size="sm" fw={600}>
          {historySourceWords(entry.source)}
        </Text>
        <Text size="xs" c="dimmed">
          <time dateTime={entry.at}>{formatDateTime(entry.at)}</time>
        </Text>
        {entry.conflictResolution && (
          <Badge size="sm" variant="light" color="orange" c="orange.9" tt="none">
            Settled a conflict
          </Badge>
        )}
      </Group>
      <List size="sm" spacing={2} listStyleType="none" ml={0} pl={0}>
        {fields.map(([field, change]) => (
          <List.Item key={field}>
            <Text span size="sm" c="dimmed">
              {fieldLabel(type, field)} →{' '}
            </Text>
            <Text span size="sm" style={{ overflowWrap: 'anywhere' }}>
              {change.value === null ? 'cleared' : formatValue(type, field, change.value)}
            </Text>
          </List.Item>
        ))}
      </List>
    </Stack>
  );
}

function IdentityRow({ event }: { event: IdentityEvent }) {
  const text =
    event.kind === 'linked'
      ? `${providerName(event.provider)} record ${event.externalId} linked. ${reasonWords(event.because)}`
      : `${event.kind === 'merge' ? 'Merged' : 'Unmerged'} (${event.absorbedId.slice(0, 8)} into ${event.survivorId.slice(0, 8)})${
          event.undone ? ', since undone' : ''
        }. ${event.because === null ? '' : reasonWords(event.because).replace(/^Linked/, 'Made')}`;
  return (
    <List.Item>
      <Text size="sm">
        <time dateTime={event.at}>{formatDateTime(event.at)}</time> · {text}
      </Text>
    </List.Item>
  );
}

/** Who or which system changed what, to which value, and the settled conflicts; then how the record was assembled. */
export function HistoryTab({
  type,
  query,
}: {
  type: RecordType;
  query: UseInfiniteQueryResult<InfiniteData<HistoryPage>>;
}) {
  if (query.isPending)
    return (
      <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading the history">
        {[0, 1, 2].map((n) => (
          <Skeleton key={n} height={56} />
        ))}
      </Stack>
    );
  const pages = query.data?.pages ?? [];
  if (query.isError && pages.length === 0)
    return <ErrorState error={query.error} onRetry={() => void query.refetch()} />;
  const entries = pages.flatMap((page) => page.data);
  const identity = pages[0]?.identity ?? [];
  return (
    <Stack gap="md">
      <section aria-labelledby="history-changes">
        <Title order={3} size="h5" id="history-changes" mb="xs">
          Changes
        </Title>
        {entries.length === 0 ? (
          <EmptyState title="No changes yet">
            Changes from connected systems and people appear here.
          </EmptyState>
        ) : (
          <Stack component="ul" gap={0} p={0} m={0}>
            {entries.map((entry) => (
              <ChangeRow key={entry.id} type={type} entry={entry} />
            ))}
          </Stack>
        )}
        {query.hasNextPage && (
          <Group justify="center" mt="xs">
            <Button
              variant="default"
              size="xs"
              onClick={() => void query.fetchNextPage()}
              loading={query.isFetchingNextPage}
            >
              Load older changes
            </Button>
          </Group>
        )}
        {query.isFetchNextPageError && (
          <ErrorState error={query.error} onRetry={() => void query.fetchNextPage()} />
        )}
      </section>
      <section aria-labelledby="history-identity">
        <Title order={3} size="h5" id="history-identity" mb="xs">
          How this record was assembled
        </Title>
        {identity.length === 0 ? (
          <Text size="sm" c="dimmed">
            Nothing linked or merged yet.
          </Text>
        ) : (
          <List spacing={4} listStyleType="none" ml={0} pl={0}>
            {identity.map((event) => (
              <IdentityRow
                key={
                  event.kind === 'linked'
                    ? `l:${event.connectionId}:${event.externalId}`
                    : `o:${event.operationId}:${event.kind}`
                }
                event={event}
              />
            ))}
          </List>
        )}
      </section>
    </Stack>
  );
}
