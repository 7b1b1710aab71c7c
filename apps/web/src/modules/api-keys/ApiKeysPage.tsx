import { Alert, Button, Group, Skeleton, Stack, Text, Title, Tooltip, VisuallyHidden } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { DataTable, type DataTableColumn } from 'mantine-datatable';
import { useState } from 'react';
import { describeError } from '../../api/errors';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { StatusBadge } from '../../ui/StatusBadge';
import { formatDateTime, relativeTime } from '../../ui/utils/time';
import { type ApiKey, apiKeysQuery, type CreatedApiKey, useRevokeApiKey } from './api';
import { CreateKeyDialog } from './components/CreateKeyDialog';
import { SecretDialog } from './components/SecretDialog';

const when = (iso: string | null, never: string) =>
  iso === null ? (
    <Text span size="sm" c="dimmed">
      {never}
    </Text>
  ) : (
    <Tooltip label={formatDateTime(iso)}>
      <Text span size="sm">
        {relativeTime(iso)}
      </Text>
    </Tooltip>
  );

/** Keys for scripts: create one (its secret shown once), revoke one. */
export function ApiKeysPage() {
  const wide = useMediaQuery('(min-width: 48em)', true);
  const keys = useQuery(apiKeysQuery);
  const revoke = useRevokeApiKey();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const rows = keys.data?.data ?? [];

  const columns: DataTableColumn<ApiKey>[] = [
    {
      accessor: 'name',
      title: 'Name',
      render: (key) => (
        <Stack gap={0}>
          <Text size="sm" fw={500} style={{ overflowWrap: 'anywhere' }}>
            {key.name}
          </Text>
          <Text size="xs" c="dimmed">
            sk_{key.prefix}_…
          </Text>
        </Stack>
      ),
    },
    { accessor: 'role', title: 'Role', render: (key) => (key.role === 'admin' ? 'Admin' : 'Sales') },
    ...(wide
      ? [
          { accessor: 'createdAt', title: 'Created', render: (key: ApiKey) => when(key.createdAt, '—') },
          {
            accessor: 'lastUsedAt',
            title: 'Last used',
            render: (key: ApiKey) => when(key.lastUsedAt, 'Never'),
          },
        ]
      : []),
    {
      accessor: 'revokedAt',
      title: 'Status',
      render: (key) =>
        key.revokedAt === null ? (
          <StatusBadge label="Active" tone="success" />
        ) : (
          <Tooltip label={`Revoked ${formatDateTime(key.revokedAt)}`}>
            <span>
              <StatusBadge label="Revoked" />
            </span>
          </Tooltip>
        ),
    },
    {
      accessor: 'id',
      title: <VisuallyHidden>Actions</VisuallyHidden>,
      textAlign: 'right',
      render: (key) =>
        key.revokedAt === null ? (
          <Button
            size="compact-xs"
            variant="default"
            aria-label={`Revoke ${key.name}`}
            onClick={() => {
              revoke.reset();
              setRevoking(key);
            }}
          >
            Revoke
          </Button>
        ) : null,
    },
  ];

  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-end" wrap="wrap">
        <div>
          <Title order={1}>API keys</Title>
          <Text c="dimmed" size="sm" maw={640}>
            Keys let scripts and other systems use the API. People sign in instead; give each script its own
            key so that you can revoke one without stopping the others.
          </Text>
        </div>
        <Button color="blue.8" onClick={() => setCreating(true)}>
          Create a key
        </Button>
      </Group>
      {keys.isPending ? (
        <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading API keys">
          {Array.from({ length: 4 }, (_, i) => (
            <Skeleton key={i} height={40} />
          ))}
        </Stack>
      ) : keys.isError ? (
        <ErrorState error={keys.error} onRetry={() => void keys.refetch()} />
      ) : rows.length === 0 ? (
        <EmptyState title="No API keys">Create one for each script or system that calls the API.</EmptyState>
      ) : (
        <DataTable<ApiKey>
          aria-label="API keys"
          withTableBorder
          borderRadius="md"
          records={[...rows].sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null))}
          columns={columns}
          idAccessor="id"
          fetching={keys.isRefetching}
        />
      )}
      <CreateKeyDialog opened={creating} onClose={() => setCreating(false)} onCreated={setCreated} />
      <SecretDialog created={created} onClose={() => setCreated(null)} />
      <ConfirmDialog
        opened={revoking !== null}
        title={revoking === null ? '' : `Revoke “${revoking.name}”?`}
        confirmLabel="Revoke key"
        danger
        loading={revoke.isPending}
        onCancel={() => setRevoking(null)}
        onConfirm={() => {
          if (revoking === null) return;
          revoke.mutate(revoking.id, {
            onSuccess: () => {
              notifications.show({
                color: 'green',
                title: 'Key revoked',
                message: `“${revoking.name}” no longer works.`,
              });
              setRevoking(null);
            },
          });
        }}
      >
        <Text size="sm">
          Every script or system using this key is refused from its next request (401). This cannot be undone:
          to let them in again, create a new key and give it to them.
        </Text>
        {revoke.isError && (
          <Alert color="red" variant="outline" role="alert" title={describeError(revoke.error).title}>
            <Text size="sm">{describeError(revoke.error).message}</Text>
          </Alert>
        )}
      </ConfirmDialog>
    </Stack>
  );
}
