import { Group, Progress, Skeleton, Stack, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { AnchorLink } from '../../ui/AnchorLink';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { LoadMore } from '../../ui/LoadMore';
import { StatusBadge } from '../../ui/StatusBadge';
import { formatDateTime } from '../../ui/utils/time';
import { type Replay, replaysQuery } from './api';
import { PreviewReplayForm } from './components/PreviewReplayForm';
import { fromLabel, modeLabel, progressOf, STATUS_TONE } from './utils/replay-view';

/** Replays of the workspace, newest first, and a form to preview one. */
export function ReplaysPage() {
  const list = useInfiniteQuery(replaysQuery());
  const replays = list.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <Stack gap="md">
      <Title order={1}>Replays</Title>
      <Text c="dimmed" maw={720}>
        A replay rebuilds the records from the change log under the policies in force now: a preview reports
        what would change, an apply changes it and writes the final values to the connected systems.
      </Text>
      <PreviewReplayForm />
      <Title order={2} size="h4">
        History
      </Title>
      {list.isPending ? (
        <Skeleton height={160} role="status" aria-label="Loading replays" />
      ) : list.isError && replays.length === 0 ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : replays.length === 0 ? (
        <EmptyState title="No replays yet">
          After changing a policy, preview a replay to see what it would change in the records merged before.
        </EmptyState>
      ) : (
        <>
          <Table.ScrollContainer minWidth={640}>
            <Table verticalSpacing="xs" highlightOnHover>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Replay</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Records</Table.Th>
                  <Table.Th>Requested by</Table.Th>
                  <Table.Th>Progress</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {replays.map((replay) => (
                  <ReplayRow key={replay.id} replay={replay} />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
          <LoadMore query={list} summary={<>{replays.length} replays</>} />
        </>
      )}
    </Stack>
  );
}

function ReplayRow({ replay }: { replay: Replay }) {
  const progress = progressOf(replay);
  const who = replay.createdBy.label ?? `${replay.createdBy.kind} ${replay.createdBy.id.slice(0, 8)}`;
  return (
    <Table.Tr>
      <Table.Td>
        <AnchorLink to="/admin/replays/$id" params={{ id: replay.id }}>
          {modeLabel(replay.mode)} of {formatDateTime(replay.createdAt)}
        </AnchorLink>
      </Table.Td>
      <Table.Td>
        <StatusBadge label={replay.status} tone={STATUS_TONE[replay.status]} />
      </Table.Td>
      <Table.Td>{fromLabel(replay.from)}</Table.Td>
      <Table.Td>{who}</Table.Td>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          {replay.status === 'running' && (
            <Progress
              value={progress.percent ?? 100}
              animated={progress.percent === null}
              w={80}
              aria-label={`Progress of the ${modeLabel(replay.mode).toLowerCase()}`}
            />
          )}
          <Text size="sm">
            {replay.status === 'succeeded' || replay.status === 'failed'
              ? replay.finishedAt !== null
                ? `Finished ${formatDateTime(replay.finishedAt)}`
                : replay.status
              : progress.text}
          </Text>
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}
