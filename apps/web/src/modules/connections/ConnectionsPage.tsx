import { Alert, Button, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { describeError } from '../../api/errors';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { providerName } from '../records/utils/format';
import {
  type Connection,
  connectionsOverviewQuery,
  useDisconnect,
  useLifecycleAction,
  useStartOAuth,
} from './api';
import { ConnectDialog, RECONNECT_RETURN_TO } from './components/ConnectDialog';
import { type CardAction, ConnectionCard } from './components/ConnectionCard';
import { DisconnectDialog } from './components/DisconnectDialog';
import { type ConnectionsSearch, oauthErrorMessage } from './utils/connect-outcome';
import { connectionName, reconnectTarget } from './utils/connection-name';

type Dialog = { kind: 'resync' | 'disconnect'; connection: Connection } | null;

/** The admin's view of every connected system: status, progress, health, and what to do. */
export function ConnectionsPage({ search }: { search: ConnectionsSearch }) {
  const overview = useQuery(connectionsOverviewQuery());
  const navigate = useNavigate();
  const lifecycle = useLifecycleAction();
  const disconnect = useDisconnect();
  const startOAuth = useStartOAuth();
  const [connectOpen, setConnectOpen] = useState(false);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [actionError, setActionError] = useState<{ id: string; error: unknown } | null>(null);
  const [reconnecting, setReconnecting] = useState<string | null>(null);
  const connections = overview.data?.connections ?? [];
  const now = overview.dataUpdatedAt || Date.now();

  // Back from a consent page: say what was connected; a dry run opens its report.
  const handled = useRef<string | null>(null);
  useEffect(() => {
    const ids = search.connected;
    if (ids === undefined || overview.data === undefined) return;
    const key = ids.join(',');
    if (handled.current === key) return;
    handled.current = key;
    const made = overview.data.connections.filter((c) => ids.includes(c.id));
    const reconnected = search.reconnect === true;
    notifications.show({
      color: 'green',
      title: reconnected ? 'Reconnected' : 'Connected',
      message:
        made.length === 0
          ? `${ids.length} connection${ids.length === 1 ? '' : 's'} made.`
          : `${made.map(connectionName).join(', ')}: ${
              reconnected
                ? 'syncing again from where it stopped.'
                : made.some((c) => c.dryRun)
                  ? 'reading in dry run; nothing is written until you enable it.'
                  : 'reading its history now.'
            }`,
    });
    const dry = made.find((c) => c.dryRun && !reconnected);
    if (dry) void navigate({ to: '/admin/connections/$id/dry-run', params: { id: dry.id } });
    else void navigate({ to: '/admin/connections', search: {}, replace: true });
  }, [search.connected, search.reconnect, overview.data, navigate]);

  const reconnect = (connection: Connection) => {
    setActionError(null);
    setReconnecting(connection.id);
    startOAuth.mutate(
      { ...reconnectTarget(connection, connections), dryRun: false, returnTo: RECONNECT_RETURN_TO },
      {
        onSuccess: ({ authorizeUrl }) => window.location.assign(authorizeUrl),
        onError: (error) => {
          setReconnecting(null);
          setActionError({ id: connection.id, error });
        },
      },
    );
  };

  const onAction = (connection: Connection, action: CardAction) => {
    setActionError(null);
    switch (action) {
      case 'reconnect':
        return reconnect(connection);
      case 'resync':
      case 'disconnect':
        disconnect.reset();
        return setDialog({ kind: action, connection });
      case 'pause':
      case 'resume':
        return lifecycle.mutate(
          { id: connection.id, action },
          {
            onSuccess: () =>
              notifications.show({
                color: 'green',
                title: action === 'pause' ? 'Paused' : 'Resumed',
                message:
                  action === 'pause'
                    ? `${connectionName(connection)} is paused: nothing is read from or written to it until you resume it.`
                    : `${connectionName(connection)} is syncing again; what changed meanwhile arrives now.`,
              }),
            onError: (error) => setActionError({ id: connection.id, error }),
          },
        );
    }
  };

  // A reconnect stays busy until the browser has left for the consent page.
  const busyId = (lifecycle.isPending ? lifecycle.variables?.id : undefined) ?? reconnecting;

  return (
    <Stack gap="md">
      <Group justify="space-between" align="center">
        <Title order={1}>Connections</Title>
        <Button color="blue.8" onClick={() => setConnectOpen(true)}>
          Connect a system
        </Button>
      </Group>

      {search.oauthError !== undefined && (
        <Alert color="red" variant="outline" title={oauthErrorMessage(search.oauthError).title} role="alert">
          <Stack gap="xs">
            <Text size="sm">{oauthErrorMessage(search.oauthError).message}</Text>
            <Group gap="sm">
              <Button size="xs" color="blue.8" onClick={() => setConnectOpen(true)}>
                Connect again
              </Button>
              <Button
                size="xs"
                variant="default"
                onClick={() => void navigate({ to: '/admin/connections', search: {}, replace: true })}
              >
                Dismiss
              </Button>
            </Group>
            <Text size="xs" c="dimmed">
              Code {search.oauthError}
            </Text>
          </Stack>
        </Alert>
      )}

      {overview.isPending ? (
        <Stack gap="md" role="status" aria-busy="true" aria-label="Loading connections">
          <Skeleton height={150} />
          <Skeleton height={150} />
        </Stack>
      ) : overview.isError && connections.length === 0 ? (
        <ErrorState error={overview.error} onRetry={() => void overview.refetch()} />
      ) : connections.length === 0 ? (
        <EmptyState title="No systems connected yet">
          <Stack align="center" gap="sm">
            <Text c="dimmed">
              Connect HubSpot portals and Google accounts to keep people, companies, deals, meetings and
              emails in step across them. Try one in dry run first to see what it would change.
            </Text>
            <Button color="blue.8" onClick={() => setConnectOpen(true)}>
              Connect a system
            </Button>
          </Stack>
        </EmptyState>
      ) : (
        <Stack gap="md" component="section" aria-label="Connected systems">
          {overview.isError && <ErrorState error={overview.error} onRetry={() => void overview.refetch()} />}
          {sortForPage(connections).map((connection) => (
            <Stack key={connection.id} gap={4}>
              <ConnectionCard
                connection={connection}
                health={overview.data?.health[connection.id]}
                now={now}
                busy={busyId === connection.id}
                onAction={(action) => onAction(connection, action)}
              />
              {actionError?.id === connection.id && (
                <Alert
                  color="red"
                  variant="light"
                  title={describeError(actionError.error).title}
                  role="alert"
                >
                  <Text size="sm" c="dark.7">
                    {describeError(actionError.error).message}
                  </Text>
                </Alert>
              )}
            </Stack>
          ))}
        </Stack>
      )}

      <ConnectDialog
        opened={connectOpen}
        onClose={() => setConnectOpen(false)}
        onConnectedWithToken={(connection) => {
          setConnectOpen(false);
          notifications.show({
            color: 'green',
            title: 'Connected',
            message: `${connectionName(connection)}: ${connection.dryRun ? 'reading in dry run.' : 'reading its history now.'}`,
          });
          if (connection.dryRun)
            void navigate({ to: '/admin/connections/$id/dry-run', params: { id: connection.id } });
        }}
      />

      <ConfirmDialog
        opened={dialog?.kind === 'resync'}
        title={dialog ? `Resync ${connectionName(dialog.connection)}?` : 'Resync'}
        confirmLabel="Resync from the start"
        loading={lifecycle.isPending}
        onCancel={() => setDialog(null)}
        onConfirm={() => {
          if (!dialog) return;
          const { connection } = dialog;
          lifecycle.mutate(
            { id: connection.id, action: 'resync' },
            {
              onSuccess: () => {
                setDialog(null);
                notifications.show({
                  color: 'green',
                  title: 'Resync started',
                  message: `${connectionName(connection)} is reading everything again.`,
                });
              },
              onError: (error) => {
                setDialog(null);
                setActionError({ id: connection.id, error });
              },
            },
          );
        }}
      >
        {dialog && (
          <Stack gap="xs">
            <Text size="sm">
              Everything in this {providerName(dialog.connection.provider)} account is read again from the
              start, as on the day it was connected. Use it when records seem to be missing or out of date.
            </Text>
            <Text size="sm">
              Nothing is duplicated: records already synced keep their links. Until it is done its status
              shows Backfilling, its changes arrive later than usual, and it uses more of the provider's
              request quota.
            </Text>
          </Stack>
        )}
      </ConfirmDialog>

      <DisconnectDialog
        opened={dialog?.kind === 'disconnect'}
        name={dialog ? connectionName(dialog.connection) : ''}
        provider={dialog ? providerName(dialog.connection.provider) : ''}
        loading={disconnect.isPending}
        error={disconnect.error}
        onCancel={() => setDialog(null)}
        onConfirm={(data) => {
          if (!dialog) return;
          const { connection } = dialog;
          disconnect.mutate(
            { id: connection.id, data },
            {
              onSuccess: () => {
                setDialog(null);
                notifications.show({
                  color: 'green',
                  title: 'Disconnected',
                  message: `${connectionName(connection)} is disconnected${data === 'erase' ? ' and what only it knew is erased' : ''}.`,
                });
              },
            },
          );
        }}
      />
    </Stack>
  );
}

/** Disconnected ones last; otherwise in the order they were connected. */
function sortForPage(connections: Connection[]): Connection[] {
  const gone = (c: Connection) => (c.status === 'disconnected' ? 1 : 0);
  return [...connections].sort((a, b) => gone(a) - gone(b));
}
