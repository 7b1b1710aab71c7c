import { Alert, Group, Paper, Progress, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { StatusBadge } from '../../../ui/StatusBadge';
import { connectionFix } from '../../connections/utils/connection-fix';
import { connectionName } from '../../connections/utils/connection-name';
import {
  backfillPercent,
  connectionStatus,
  durationWords,
  isBackfilling,
  watermarkDelay,
} from '../../connections/utils/connection-status';
import { CALLOUT_STYLES, providerName } from '../../records/utils/format';
import type { ConnectionHealth } from '../api';
import { statusSubject } from '../utils/series';

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" fw={600}>
        {value}
      </Text>
    </div>
  );
}

/** One connection's health now: status, backfill, lag, watermark delay, pending writes, last error. */
export function HealthCard({ health, now }: { health: ConnectionHealth; now: number }) {
  const connection = statusSubject(health);
  const name = connectionName(health);
  const provider = providerName(health.provider);
  const status = connectionStatus(connection, health, now);
  const delay = watermarkDelay(connection, health, now);
  const lag = health.lag.events;
  const fix = connectionFix(connection, provider);
  const headingId = `health-${health.id}`;
  const seen = health.backfill.seen;
  const total = health.backfill.total;
  const percent = backfillPercent(seen, total);

  return (
    <Paper component="article" withBorder p="md" radius="md" aria-labelledby={headingId} data-health-card>
      <Stack gap="sm">
        <Group justify="space-between" align="flex-start" wrap="nowrap" gap="sm">
          <div style={{ minWidth: 0 }}>
            <Title order={3} size="h5" id={headingId} style={{ overflowWrap: 'anywhere' }}>
              {name}
            </Title>
            <Text size="xs" c="dimmed">
              {provider}
            </Text>
          </div>
          <StatusBadge label={status.label} tone={status.tone} />
        </Group>
        {status.detail !== null && (
          <Text size="sm" c="dimmed">
            {status.detail}
          </Text>
        )}
        {isBackfilling(connection) && (
          <Progress
            value={percent ?? 100}
            animated={percent === null}
            aria-label={
              percent === null
                ? `Backfill of ${name}: ${seen.toLocaleString('en')} records read`
                : `Backfill of ${name}: ${percent} %`
            }
          />
        )}
        <SimpleGrid cols={3} spacing="xs">
          <Figure label="Lag" value={`${lag.toLocaleString('en')} events`} />
          <Figure label="Watermark delay" value={delay === null ? 'none yet' : durationWords(delay)} />
          <Figure label="Pending writes" value={(health?.pendingWrites ?? 0).toLocaleString('en')} />
        </SimpleGrid>
        {fix !== null && (
          <Alert
            color={fix.tone === 'danger' ? 'red' : 'orange'}
            variant="light"
            title={fix.title}
            styles={CALLOUT_STYLES}
          >
            <Text size="sm">{fix.fix}</Text>
            {health.lastErrorCode !== null && (
              <Text size="xs" c="dimmed" mt={4}>
                Last error: {health.lastErrorCode}
              </Text>
            )}
          </Alert>
        )}
      </Stack>
    </Paper>
  );
}
