import { Alert, Button, Group, List, Progress, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { AnchorLink } from '../../ui/AnchorLink';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { ErrorState } from '../../ui/ErrorState';
import { StatusBadge } from '../../ui/StatusBadge';
import { formatDateTime } from '../../ui/utils/time';
import { sourcesQuery } from '../policies/api';
import { sourceNamer } from '../policies/utils/sources';
import { isUnderway, type Replay, replayQuery, useStartReplay } from './api';
import { ReplayReport } from './components/ReplayReport';
import { ReplayStartError } from './components/ReplayRunningNotice';
import { applyConsequences, fromLabel, modeLabel, progressOf, STATUS_TONE } from './utils/replay-view';

/** One replay: followed while it runs, then its report; a finished preview can be applied. */
export function ReplayPage({ id }: { id: string }) {
  const replay = useQuery(replayQuery(id));
  const sources = useQuery(sourcesQuery());
  const nameOf = useMemo(() => sourceNamer(sources.data ?? []), [sources.data]);

  return (
    <Stack gap="md">
      <AnchorLink to="/admin/replays" size="sm">
        ← All replays
      </AnchorLink>
      {replay.isPending ? (
        <Stack gap="sm" role="status" aria-busy="true" aria-label="Loading the replay">
          <Title order={1}>Replay</Title>
          <Skeleton height={24} width="50%" />
          <Skeleton height={160} />
        </Stack>
      ) : replay.isError ? (
        <>
          <Title order={1}>Replay</Title>
          <ErrorState error={replay.error} onRetry={() => void replay.refetch()} />
        </>
      ) : (
        <ReplayView replay={replay.data} nameOf={nameOf} />
      )}
    </Stack>
  );
}

function ReplayView({ replay, nameOf }: { replay: Replay; nameOf: (source: string) => string }) {
  const progress = progressOf(replay);
  const who = replay.createdBy.label ?? `${replay.createdBy.kind} ${replay.createdBy.id.slice(0, 8)}`;
  return (
    <Stack gap="md">
      <Group gap="sm" align="center">
        <Title order={1}>{replay.mode === 'preview' ? 'Replay preview' : 'Replay applied'}</Title>
        <StatusBadge label={replay.status} tone={STATUS_TONE[replay.status]} size="lg" />
      </Group>
      <Text size="sm" c="dimmed">
        {fromLabel(replay.from)} · requested by {who} {formatDateTime(replay.createdAt)}
        {replay.finishedAt !== null && ` · finished ${formatDateTime(replay.finishedAt)}`}
      </Text>
      {isUnderway(replay) && (
        <Stack gap={4}>
          <Progress
            value={progress.percent ?? 100}
            animated={progress.percent === null}
            striped={progress.percent === null}
            size="lg"
            aria-label={`${modeLabel(replay.mode)} progress`}
          />
          <Text size="sm" aria-live="polite">
            {progress.text}
            {progress.percent !== null && ` (${progress.percent}%)`}. This page follows it.
          </Text>
        </Stack>
      )}
      {replay.status === 'failed' && (
        <Alert color="red" variant="outline" title="The replay failed" role="alert">
          <Text size="sm">{replay.failureReason ?? 'No reason was recorded.'}</Text>
          <Text size="sm" mt={4}>
            Nothing of it was applied. Fix what the reason names (a dead letter, a connection), then start a
            new one from the replays page.
          </Text>
        </Alert>
      )}
      {replay.status === 'succeeded' && replay.report !== null && (
        <>
          {replay.mode === 'preview' ? (
            <ApplyPreview replay={replay} report={replay.report} />
          ) : (
            <Alert color="green" variant="outline" title="Applied" role="status">
              <Text size="sm">
                The records are rebuilt under the current policies; the writes below are on their way to the
                connected systems.
              </Text>
            </Alert>
          )}
          <ReplayReport report={replay.report} nameOf={nameOf} />
        </>
      )}
    </Stack>
  );
}

function ApplyPreview({ replay, report }: { replay: Replay; report: NonNullable<Replay['report']> }) {
  const navigate = useNavigate();
  const start = useStartReplay();
  const [confirming, setConfirming] = useState(false);
  const consequences = applyConsequences(report.summary);

  if (consequences.length === 0)
    return (
      <Alert color="gray" variant="outline" title="Nothing to apply">
        <Text size="sm">Rebuilt under today's policies, every record comes out as it is now.</Text>
      </Alert>
    );

  return (
    <Stack gap="xs">
      <Alert color="blue" variant="outline" title="This is a preview: nothing has changed yet">
        <Stack gap="xs">
          <Text size="sm">Applying it would:</Text>
          <List size="sm">
            {consequences.map((line) => (
              <List.Item key={line}>{line}</List.Item>
            ))}
          </List>
          <Group>
            <Button onClick={() => setConfirming(true)}>Apply…</Button>
          </Group>
        </Stack>
      </Alert>
      {start.isError && <ReplayStartError error={start.error} />}
      <ConfirmDialog
        opened={confirming}
        title="Apply this replay?"
        confirmLabel="Apply"
        loading={start.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() =>
          start.mutate(
            { from: replay.from, mode: 'apply' },
            {
              onSuccess: (applied) => {
                setConfirming(false);
                void navigate({ to: '/admin/replays/$id', params: { id: applied.id } });
              },
              onError: () => setConfirming(false),
            },
          )
        }
      >
        <Text size="sm">
          {fromLabel(replay.from)}, the records are rebuilt from the change log under the policies in force
          now, replacing what stands. As this preview found, it will:
        </Text>
        <List size="sm">
          {consequences.map((line) => (
            <List.Item key={line}>{line}</List.Item>
          ))}
        </List>
        <Text size="sm">
          Writes go to the connected systems (HubSpot and the others) as soon as it finishes, and cannot be
          called back. The live sync of this workspace waits while the records are replaced; changes arriving
          meanwhile are merged right after, so the final numbers may differ slightly.
        </Text>
      </ConfirmDialog>
    </Stack>
  );
}
