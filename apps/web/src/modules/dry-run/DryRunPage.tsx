import {
  Alert,
  Anchor,
  Button,
  Group,
  List,
  Loader,
  Paper,
  Progress,
  SimpleGrid,
  Skeleton,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { describeError } from '../../api/errors';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { ErrorState } from '../../ui/ErrorState';
import { formatDateTime, relativeTime } from '../../ui/utils/time';
import {
  type DryRunComputing,
  type DryRunReport,
  dryRunReportQuery,
  isComputing,
  isDisconnected,
  isNotInDryRun,
  useDiscardDryRun,
  useEnableConnection,
} from './api';
import { ReportTabs } from './components/ReportTabs';
import { WaitingTargets } from './components/WaitingTargets';
import { backfillPercent, entityLabel, plural, systemName, writeLines } from './utils/report';
import type { ReportTab } from './utils/tabs';

function BackToConnections() {
  return (
    <Anchor component={Link} to="/admin/connections">
      Back to Connections
    </Anchor>
  );
}

function NoReport({ disconnected }: { disconnected: boolean }) {
  return (
    <Stack gap="md">
      <Title order={1}>Dry run</Title>
      <Alert
        color="blue"
        variant="outline"
        title={disconnected ? 'This connection was disconnected' : 'This connection is not in dry run'}
        role="status"
      >
        <Stack gap="xs">
          <Text size="sm">
            {disconnected
              ? 'Its dry run was discarded or the connection was disconnected, so nothing of it will sync. To try the account again, connect it again from the Connections page.'
              : 'It was connected without a dry run, or its dry run was already enabled, so there is no report to show. Its state and what it syncs are on the Connections page.'}
          </Text>
          <BackToConnections />
        </Stack>
      </Alert>
    </Stack>
  );
}

const STATS: { key: keyof DryRunReport['summary']; label: string }[] = [
  { key: 'links', label: 'Links' },
  { key: 'creations', label: 'New records' },
  { key: 'changes', label: 'Field changes' },
  { key: 'conflicts', label: 'Conflicts' },
  { key: 'possibleDuplicates', label: 'Left for review' },
  { key: 'writes', label: 'Writes' },
];

function Summary({ report }: { report: DryRunReport }) {
  const percent = backfillPercent(report.backfill);
  const { seen, estimatedTotal } = report.backfill;
  return (
    <Stack gap="md">
      <Paper withBorder p="md" radius="md">
        <Stack gap="xs">
          <Group justify="space-between" wrap="wrap" gap="xs">
            <Text fw={600}>{report.complete ? 'Backfill finished' : 'Still reading this account'}</Text>
            <Text size="sm" c="dimmed">
              {estimatedTotal === null ? plural(seen, 'record') : `${seen} of ${estimatedTotal} records`} read
              · computed {relativeTime(report.computedAt)}
            </Text>
          </Group>
          <Progress
            value={report.complete ? 100 : (percent ?? 100)}
            animated={!report.complete}
            striped={!report.complete && percent === null}
            aria-label={
              report.complete
                ? 'Backfill finished'
                : percent === null
                  ? `Backfill in progress, ${seen} records read`
                  : `Backfill ${percent}% done`
            }
          />
          {!report.complete && (
            <Text size="sm" c="dimmed">
              The report covers what was read so far and refreshes every few seconds. New records are counted
              once the backfill finishes.
            </Text>
          )}
        </Stack>
      </Paper>
      <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} spacing="sm" component="dl" m={0}>
        {STATS.map(({ key, label }) => (
          <Paper key={key} withBorder p="sm" radius="md">
            <Text component="dt" size="xs" c="dimmed" tt="uppercase" fw={600}>
              {label}
            </Text>
            <Text component="dd" m={0} size="xl" fw={700} data-testid={`dry-run-${key}`}>
              {report.summary[key]}
            </Text>
          </Paper>
        ))}
      </SimpleGrid>
    </Stack>
  );
}

function Failures({ report }: { report: DryRunReport }) {
  if (report.failures.length === 0) return null;
  return (
    <Alert
      color="orange"
      variant="outline"
      title={`${plural(report.summary.failures, 'change')} the sync would refuse`}
    >
      <Text size="sm" mb="xs">
        These would go to the dead letters once enabled. Fix them in the account, or retry them from Dead
        letters later.
      </Text>
      <List size="sm">
        {report.failures.slice(0, 20).map((f) => (
          <List.Item key={f.eventKey}>
            {entityLabel(f.entityType)} {f.externalId}: {f.error}
          </List.Item>
        ))}
      </List>
    </Alert>
  );
}

function EnableConsequences({ report }: { report: DryRunReport }) {
  const lines = writeLines(report.writes);
  const { summary } = report;
  const openConflicts = report.conflicts.filter((c) => c.status === 'open').length;
  return (
    <Stack gap="xs">
      <Text size="sm">Its records start syncing both ways. Enabling makes these writes:</Text>
      {lines.length === 0 ? (
        <Text size="sm">No writes to any system.</Text>
      ) : (
        <List size="sm" aria-label="Writes enabling makes">
          {lines.map((line) => (
            <List.Item key={line}>{line}</List.Item>
          ))}
        </List>
      )}
      <Text size="sm">
        {plural(summary.links, 'record')} linked, {plural(summary.creations, 'new record')},{' '}
        {plural(summary.changes, 'record')} with changed fields
        {openConflicts > 0 ? `, ${plural(openConflicts, 'conflict')} waiting in the inbox` : ''}.
      </Text>
      <WaitingTargets report={report} />
      {!report.complete && (
        <Alert color="orange" variant="light" title="The backfill has not finished">
          These counts cover what was read so far; what it reads later syncs too.
        </Alert>
      )}
      {report.truncated && (
        <Text size="xs" c="dimmed">
          The lists on this page show the first {report.links.length || report.changes.length} rows of each;
          the counts are complete.
        </Text>
      )}
    </Stack>
  );
}

/** What connecting an account in dry run would do, then Enable or Discard. */
/** Before the first report: the workers are computing it (the page asks again by itself). */
function Computing({ answer }: { answer: DryRunComputing }) {
  return (
    <Stack gap="md">
      <Title order={1}>Dry run</Title>
      <Group gap="sm" role="status" aria-live="polite">
        <Loader size="sm" aria-hidden="true" />
        <Text>
          Computing the report for {systemName(answer)} from the {answer.backfill.seen.toLocaleString('en')}{' '}
          record
          {answer.backfill.seen === 1 ? '' : 's'} its backfill has read…
        </Text>
      </Group>
      {answer.lastFailure !== null && (
        <Alert color="red" variant="light" title="The last try failed">
          {answer.lastFailure.reason} ({formatDateTime(answer.lastFailure.at)}). Trying again.
        </Alert>
      )}
      <BackToConnections />
    </Stack>
  );
}

export function DryRunPage({
  id,
  tab,
  onTabChange,
}: {
  id: string;
  tab: ReportTab;
  onTabChange: (tab: ReportTab) => void;
}) {
  const report = useQuery(dryRunReportQuery(id));
  const enable = useEnableConnection(id);
  const discard = useDiscardDryRun(id);
  const navigate = useNavigate();
  const [asking, setAsking] = useState<'enable' | 'discard' | null>(null);

  if (report.isPending)
    return (
      <Stack gap="md" role="status" aria-busy="true" aria-label="Loading the dry-run report">
        <Title order={1}>Dry run</Title>
        <Skeleton height={90} />
        <Skeleton height={60} />
        <Skeleton height={240} />
      </Stack>
    );
  if (report.isError && report.data === undefined) {
    if (isNotInDryRun(report.error) || isDisconnected(report.error))
      return <NoReport disconnected={isDisconnected(report.error)} />;
    return (
      <Stack gap="md">
        <Title order={1}>Dry run</Title>
        <ErrorState error={report.error} onRetry={() => void report.refetch()} />
        <BackToConnections />
      </Stack>
    );
  }
  const data = report.data;
  if (data === undefined) return null;
  if (isComputing(data)) return <Computing answer={data} />;
  const name = systemName(data);

  const onEnable = () =>
    enable.mutate(undefined, {
      onSuccess: () => {
        notifications.show({ color: 'green', title: `${name} enabled`, message: 'It syncs from now on.' });
        void navigate({ to: '/admin/connections' });
      },
    });
  const onDiscard = () =>
    discard.mutate(undefined, {
      onSuccess: () => {
        notifications.show({
          title: 'Dry run discarded',
          message: `${name} is disconnected; nothing was synced.`,
        });
        void navigate({ to: '/admin/connections' });
      },
    });

  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-start" wrap="wrap" gap="sm">
        <Stack gap={4}>
          <Title order={1} style={{ overflowWrap: 'anywhere' }}>
            Dry run: {name}
          </Title>
          <Text size="sm" c="dimmed">
            Nothing has been written anywhere. This is what enabling it would do.
          </Text>
        </Stack>
        <Group gap="sm">
          <Button variant="default" color="red" c="red.9" onClick={() => setAsking('discard')}>
            Discard…
          </Button>
          <Button color="blue.8" onClick={() => setAsking('enable')}>
            Enable…
          </Button>
        </Group>
      </Group>
      {report.isError && (
        <Alert color="orange" variant="light" title="Could not refresh the report" role="status">
          {describeError(report.error).message} The figures below are from {relativeTime(data.computedAt)}.
        </Alert>
      )}
      <Summary report={data} />
      <Failures report={data} />
      <ReportTabs report={data} tab={tab} onTabChange={onTabChange} />

      <ConfirmDialog
        opened={asking === 'enable'}
        title={`Enable ${name}?`}
        confirmLabel="Enable and sync"
        loading={enable.isPending}
        onConfirm={onEnable}
        onCancel={() => {
          setAsking(null);
          enable.reset();
        }}
      >
        <EnableConsequences report={data} />
        {enable.isError && <ErrorState error={enable.error} />}
      </ConfirmDialog>
      <ConfirmDialog
        opened={asking === 'discard'}
        title={`Discard the dry run of ${name}?`}
        confirmLabel="Discard and disconnect"
        danger
        loading={discard.isPending}
        onConfirm={onDiscard}
        onCancel={() => {
          setAsking(null);
          discard.reset();
        }}
      >
        <Text size="sm">
          The connection is disconnected for good and everything it read is erased. Nothing of it reached any
          system, so the records you sync stay as they are. To try again, connect the account again.
        </Text>
        {discard.isError && <ErrorState error={discard.error} />}
      </ConfirmDialog>
    </Stack>
  );
}
