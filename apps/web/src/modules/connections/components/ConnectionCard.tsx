import { Alert, Box, Button, Group, Menu, Paper, Progress, Stack, Text, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { StatusBadge } from '../../../ui/StatusBadge';
import { relativeTime } from '../../../ui/utils/time';
import { providerName } from '../../records/utils/format';
import type { Connection, ConnectionHealth } from '../api';
import { connectionFix } from '../utils/connection-fix';
import { connectionName } from '../utils/connection-name';
import {
  backfillPercent,
  connectionActions,
  connectionStatus,
  durationWords,
  isBackfilling,
  watermarkDelay,
} from '../utils/connection-status';

export type CardAction = 'pause' | 'resume' | 'resync' | 'reconnect' | 'disconnect';

/** One connection: its status, progress and health, what went wrong and what to do, and its menu. */
export function ConnectionCard({
  connection,
  health,
  now,
  busy,
  onAction,
}: {
  connection: Connection;
  health: ConnectionHealth | undefined;
  now: number;
  /** An action on it is running. */
  busy: boolean;
  onAction: (action: CardAction) => void;
}) {
  const name = connectionName(connection);
  const provider = providerName(connection.provider);
  const status = connectionStatus(connection, health, now);
  const actions = connectionActions(connection);
  const fix = connectionFix(connection, provider);
  const headingId = `connection-${connection.id}`;
  const { seen } = connection.state.backfill;
  const total = health?.backfill.total ?? connection.state.backfill.estimatedTotal;
  const percent = backfillPercent(health?.backfill.seen ?? seen, total);
  const delay = watermarkDelay(connection, health, now);
  const gone = connection.status === 'disconnected';

  return (
    <Paper
      component="article"
      withBorder
      p="md"
      radius="md"
      aria-labelledby={headingId}
      data-connection-id={connection.id}
      bg={gone ? 'gray.0' : undefined}
    >
      <Stack gap="sm">
        <Group justify="space-between" align="flex-start" gap="sm">
          <Stack gap={2} style={{ flex: '1 1 14rem', minWidth: 0 }}>
            <Title order={2} size="h4" id={headingId} style={{ overflowWrap: 'anywhere' }}>
              {name}
            </Title>
            <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
              {provider} · {connection.externalAccountId}
            </Text>
          </Stack>
          <Group gap="xs" wrap="nowrap" style={{ flexShrink: 0 }}>
            <span data-testid="connection-status">
              <StatusBadge label={status.label} tone={status.tone} />
            </span>
            {!gone && (
              <Menu position="bottom-end" withinPortal>
                <Menu.Target>
                  <Button variant="default" size="xs" loading={busy} aria-label={`Actions for ${name}`}>
                    Actions
                  </Button>
                </Menu.Target>
                <Menu.Dropdown>
                  {actions.reconnect && (
                    <Menu.Item onClick={() => onAction('reconnect')}>Reconnect…</Menu.Item>
                  )}
                  {actions.pause && <Menu.Item onClick={() => onAction('pause')}>Pause</Menu.Item>}
                  {actions.resume && <Menu.Item onClick={() => onAction('resume')}>Resume</Menu.Item>}
                  {actions.resync && <Menu.Item onClick={() => onAction('resync')}>Resync…</Menu.Item>}
                  {actions.dryRunReport && (
                    <Menu.Item
                      renderRoot={(props) => (
                        <Link to="/admin/connections/$id/dry-run" params={{ id: connection.id }} {...props} />
                      )}
                    >
                      Dry-run report
                    </Menu.Item>
                  )}
                  {actions.mappings && (
                    <Menu.Item
                      renderRoot={(props) => (
                        <Link
                          to="/admin/connections/$id/mappings"
                          params={{ id: connection.id }}
                          {...props}
                        />
                      )}
                    >
                      Field mappings
                    </Menu.Item>
                  )}
                  {actions.disconnect && (
                    <>
                      <Menu.Divider />
                      <Menu.Item color="red.8" onClick={() => onAction('disconnect')}>
                        Disconnect…
                      </Menu.Item>
                    </>
                  )}
                </Menu.Dropdown>
              </Menu>
            )}
          </Group>
        </Group>

        {isBackfilling(connection) && !gone && (
          <Stack gap={4}>
            {percent === null ? (
              <Progress
                value={100}
                striped
                animated
                aria-label={`Backfill of ${name}: ${seen.toLocaleString('en')} records read, total unknown`}
              />
            ) : (
              <Progress value={percent} aria-label={`Backfill of ${name}`} />
            )}
            <Text size="sm">
              {percent === null
                ? `${seen.toLocaleString('en')} records read so far`
                : `${seen.toLocaleString('en')} of about ${total?.toLocaleString('en')} records read`}
            </Text>
          </Stack>
        )}

        {status.detail !== null && (
          <Text size="sm" c="orange.9">
            Behind: {status.detail}.
          </Text>
        )}

        {!gone && (
          <Box
            component="dl"
            m={0}
            style={{
              display: 'grid',
              gridTemplateColumns: 'repeat(auto-fit, minmax(9rem, 1fr))',
              gap: 'var(--mantine-spacing-sm)',
            }}
          >
            <Stat
              label="Waiting to merge"
              value={changes(health?.lag.events ?? connection.state.lag.events)}
            />
            <Stat
              label="Complete up to"
              value={delay === null ? 'Not yet known' : `${durationWords(delay)} ago`}
            />
            <Stat
              label="Writes waiting"
              value={health === undefined ? '—' : health.pendingWrites.toLocaleString('en')}
            />
            <Stat
              label="Last successful pull"
              value={
                connection.state.lastSuccessAt
                  ? relativeTime(connection.state.lastSuccessAt, now)
                  : 'None yet'
              }
            />
          </Box>
        )}

        {gone && connection.statusReason && (
          <Text size="sm" c="dimmed">
            {capitalize(connection.statusReason)}.
          </Text>
        )}

        {fix !== null && (
          <Alert
            color={fix.tone === 'danger' ? 'red' : 'orange'}
            variant="light"
            title={fix.title}
            role={fix.tone === 'danger' ? 'alert' : undefined}
          >
            <Stack gap="xs">
              <Text size="sm" c="dark.7">
                {fix.fix}
              </Text>
              {connection.statusReason && connection.status !== 'paused' && (
                <Text size="xs" c="dark.6">
                  Reported: {connection.statusReason}
                  {connection.state.lastErrorCode ? ` (${connection.state.lastErrorCode})` : ''}
                </Text>
              )}
              {fix.action !== null && actions[fix.action] && (
                <Group>
                  <Button size="xs" color="blue.8" loading={busy} onClick={() => onAction(fix.action!)}>
                    {ACTION_LABEL[fix.action]}
                  </Button>
                </Group>
              )}
            </Stack>
          </Alert>
        )}
      </Stack>
    </Paper>
  );
}

const ACTION_LABEL = { reconnect: 'Reconnect', resume: 'Resume', resync: 'Resync…' } as const;

const changes = (n: number) => `${n.toLocaleString('en')} ${n === 1 ? 'change' : 'changes'}`;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text component="dt" size="xs" c="dimmed">
        {label}
      </Text>
      <Text component="dd" size="sm" fw={500} m={0}>
        {value}
      </Text>
    </div>
  );
}
