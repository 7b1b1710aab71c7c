import '@mantine/charts/styles.css';
import { BarChart, LineChart } from '@mantine/charts';
import {
  Anchor,
  Button,
  Group,
  SegmentedControl,
  Select,
  SimpleGrid,
  Skeleton,
  Stack,
  Text,
  Title,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { formatDateTime } from '../../ui/utils/time';
import { connectionName } from '../connections/utils/connection-name';
import { connectionStatus } from '../connections/utils/connection-status';
import {
  connectionHistoryQuery,
  DEFAULT_RANGE,
  type HealthNow,
  HISTORY_RANGES,
  type HistoryRange,
  healthNowQuery,
  workspaceHistoryQuery,
} from './api';
import { ChartFigure } from './components/ChartFigure';
import { HealthCard } from './components/HealthCard';
import { InsightsHealthSection } from './components/InsightsHealthSection';
import {
  byAttention,
  consumerLagRows,
  failureCodes,
  lagRows,
  latestAndPeak,
  mostBehind,
  statusSubject,
  writesRows,
  writesSummary,
} from './utils/series';

const CODE_COLORS = ['red.7', 'orange.7', 'grape.7', 'pink.7', 'yellow.8', 'cyan.8'] as const;
const CHART_HEIGHT = 220;
// Lines are drawn without dots, but a series of one or two points would show nothing but dots.

/** The admin's view of the sync over time: each connection now, and the last hours in charts. */
export function HealthPage() {
  const now = useQuery(healthNowQuery());
  const [hours, setHours] = useState<HistoryRange>(DEFAULT_RANGE);

  return (
    <Stack gap="lg">
      <Stack gap={4}>
        <Title order={1}>Sync health</Title>
        <Text c="dimmed" size="sm">
          Each connection now, refreshed every 5 seconds, and how the sync went over the last hours. Jobs
          waiting, running or failed are in the{' '}
          <Anchor href="/admin/queues" underline="always">
            queues dashboard
          </Anchor>
          .
        </Text>
        {now.data !== undefined && (
          <Text size="sm" data-testid="health-checked">
            Checked {formatDateTime(now.data.checkedAt)} ·{' '}
            <Anchor component={Link} to="/admin/dead-letters" underline="always">
              {now.data.deadLettersOpen.toLocaleString('en')} open dead letter
              {now.data.deadLettersOpen === 1 ? '' : 's'}
            </Anchor>
          </Text>
        )}
      </Stack>

      <Stack gap="sm" component="section" aria-labelledby="health-connections">
        <Title order={2} size="h3" id="health-connections">
          Connections
        </Title>
        <ConnectionCards now={now} />
      </Stack>

      <InsightsHealthSection now={now} />

      <Stack gap="sm" component="section" aria-labelledby="health-history">
        <Group justify="space-between" align="flex-end" gap="sm">
          <Title order={2} size="h3" id="health-history">
            Over time
          </Title>
          <SegmentedControl
            aria-label="Time range"
            value={String(hours)}
            onChange={(value) => setHours(Number(value) as HistoryRange)}
            data={HISTORY_RANGES.map((h) => ({ value: String(h), label: `${h} h` }))}
          />
        </Group>
        <History hours={hours} now={now.data} />
      </Stack>
    </Stack>
  );
}

function ConnectionCards({ now }: { now: ReturnType<typeof useQuery<HealthNow>> }) {
  if (now.isPending)
    return (
      <SimpleGrid
        cols={{ base: 1, sm: 2, lg: 3 }}
        role="status"
        aria-busy="true"
        aria-label="Loading the connections"
      >
        <Skeleton height={150} />
        <Skeleton height={150} />
        <Skeleton height={150} />
      </SimpleGrid>
    );
  if (now.isError) return <ErrorState error={now.error} onRetry={() => void now.refetch()} />;
  if (now.data.connections.length === 0)
    return (
      <EmptyState title="No connections yet">
        Connect a CRM, calendar or mailbox in{' '}
        <Anchor component={Link} to="/admin/connections">
          Connections
        </Anchor>
        ; its health shows here as soon as it syncs.
      </EmptyState>
    );
  const at = now.dataUpdatedAt || Date.now();
  return <CardList now={now.data} at={at} />;
}

/** Cards shown before "Show all": a workspace of hundreds opens on what needs attention. */
const FIRST_CARDS = 12;

function CardList({ now, at }: { now: HealthNow; at: number }) {
  const [all, setAll] = useState(false);
  const ordered = byAttention(now.connections, (c) => connectionStatus(statusSubject(c), c, at).kind);
  const shown = all ? ordered : ordered.slice(0, FIRST_CARDS);
  return (
    <Stack gap="sm">
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} data-testid="health-cards">
        {shown.map((connection) => (
          <HealthCard key={connection.id} health={connection} now={at} />
        ))}
      </SimpleGrid>
      {ordered.length > shown.length && (
        <Group justify="center">
          <Button variant="default" onClick={() => setAll(true)}>
            Show all {ordered.length.toLocaleString('en')} connections
          </Button>
        </Group>
      )}
    </Stack>
  );
}

function History({ hours, now }: { hours: HistoryRange; now: HealthNow | undefined }) {
  const workspace = useQuery(workspaceHistoryQuery(hours));
  const points = workspace.data?.workspace ?? [];
  const codes = useMemo(() => failureCodes(points), [points]);

  if (workspace.isPending)
    return (
      <SimpleGrid cols={{ base: 1, md: 2 }} role="status" aria-busy="true" aria-label="Loading the charts">
        <Skeleton height={CHART_HEIGHT + 60} />
        <Skeleton height={CHART_HEIGHT + 60} />
      </SimpleGrid>
    );
  if (workspace.isError)
    return <ErrorState error={workspace.error} onRetry={() => void workspace.refetch()} />;
  if (points.length === 0)
    return (
      <EmptyState title="No history yet">
        The workers sample every connection's health every minute; the first points appear here a minute or
        two after a connection starts syncing.
      </EmptyState>
    );

  const writes = writesRows(points, codes);
  const consumer = consumerLagRows(points);
  const consumerFigures = latestAndPeak(points.map((p) => p.consumerLag));
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} data-testid="health-charts">
      <ChartFigure
        id="chart-writes"
        title="Writes to connected systems"
        summary={writesSummary(points, hours)}
        table={{
          caption: 'Writes sent and refused by error code, per interval',
          columns: ['Time', 'Sent', ...codes],
          rows: writes.map((row) => [row.time ?? '', row.Sent ?? 0, ...codes.map((c) => row[c] ?? 0)]),
        }}
      >
        <BarChart
          h={CHART_HEIGHT}
          data={writes}
          dataKey="time"
          type="stacked"
          withLegend
          accessibilityLayer={false}
          series={[
            { name: 'Sent', color: 'teal.7' },
            ...codes.map((code, i) => ({ name: code, color: CODE_COLORS[i % CODE_COLORS.length] })),
          ]}
        />
      </ChartFigure>
      <ChartFigure
        id="chart-consumer-lag"
        title="Changes waiting to be merged"
        summary={`Consumer lag: ${(consumerFigures.latest ?? 0).toLocaleString('en')} events now, at most ${(
          consumerFigures.peak ?? 0
        ).toLocaleString('en')} in the last ${hours} h.`}
        table={{
          caption: 'Events on the log the sync has not merged yet, per interval',
          columns: ['Time', 'Events'],
          rows: consumer.map((row) => [row.time ?? '', row.lag ?? 0]),
        }}
      >
        <LineChart
          h={CHART_HEIGHT}
          data={consumer}
          dataKey="time"
          withDots={consumer.length < 3}
          curveType="linear"
          accessibilityLayer={false}
          series={[{ name: 'lag', label: 'Events', color: 'blue.7' }]}
        />
      </ChartFigure>
      <ConnectionLag hours={hours} now={now} />
    </SimpleGrid>
  );
}

function ConnectionLag({ hours, now }: { hours: HistoryRange; now: HealthNow | undefined }) {
  const connections = now?.connections ?? [];
  const [picked, setPicked] = useState<string | null>(null);
  const fallback = mostBehind(connections);
  const id = picked ?? fallback?.id ?? null;
  const history = useQuery({ ...connectionHistoryQuery(hours, id ?? ''), enabled: id !== null });
  if (id === null) return null;
  const connection = connections.find((c) => c.id === id);
  const name = connection ? connectionName(connection) : 'this connection';
  const points = history.data?.connections[0]?.points ?? [];
  const rows = lagRows(points);
  const lag = latestAndPeak(points.map((p) => p.lagEvents));
  const delay = latestAndPeak(points.map((p) => p.watermarkDelaySeconds));
  const minutes = (seconds: number | null) =>
    seconds === null ? 'no watermark' : `${Math.round(seconds / 60).toLocaleString('en')} min`;

  return (
    <ChartFigure
      id="chart-connection-lag"
      title={`Lag and watermark delay: ${name}`}
      summary={
        points.length === 0
          ? history.isPending
            ? 'Loading…'
            : `No samples of ${name} in the last ${hours} h yet.`
          : `Lag ${(lag.latest ?? 0).toLocaleString('en')} events now (at most ${(
              lag.peak ?? 0
            ).toLocaleString(
              'en',
            )}); watermark delay ${minutes(delay.latest)} now (at most ${minutes(delay.peak)}).`
      }
      table={{
        caption: `Lag in events and watermark delay in minutes of ${name}, per interval`,
        columns: ['Time', 'Lag (events)', 'Watermark delay (min)'],
        rows: rows.map((row) => [row.time ?? '', row.lag ?? 0, row.delay ?? null]),
      }}
      controls={
        <>
          <Select
            label="Connection"
            searchable
            allowDeselect={false}
            value={id}
            onChange={(value) => setPicked(value)}
            data={connections.map((c) => ({ value: c.id, label: connectionName(c) }))}
          />
          {history.isError && <ErrorState error={history.error} onRetry={() => void history.refetch()} />}
        </>
      }
    >
      {!history.isError && (
        <LineChart
          h={CHART_HEIGHT}
          data={rows}
          dataKey="time"
          withDots={rows.length < 3}
          curveType="linear"
          withLegend
          withRightYAxis
          connectNulls={false}
          accessibilityLayer={false}
          yAxisLabel="events"
          rightYAxisLabel="minutes"
          series={[
            { name: 'lag', label: 'Lag (events)', color: 'blue.7' },
            { name: 'delay', label: 'Watermark delay (min)', color: 'orange.7', yAxisId: 'right' },
          ]}
        />
      )}
    </ChartFigure>
  );
}
