import { Anchor, Button, Group, Paper, Skeleton, Stack, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { describeError } from '../../../api/errors';
import { ConfirmDialog } from '../../../ui/ConfirmDialog';
import { EmptyState } from '../../../ui/EmptyState';
import { ErrorState } from '../../../ui/ErrorState';
import { StatusBadge, type Tone } from '../../../ui/StatusBadge';
import { formatDateTime } from '../../../ui/utils/time';
import { type IdentityOperation, identityOperationsQuery, type RecordType, useUnmergeMutation } from '../api';
import { TYPE_LABEL } from '../utils/format';

const STATUS_TONE: Record<IdentityOperation['status'], Tone> = {
  pending: 'info',
  applied: 'success',
  undone: 'neutral',
};

function RecordLink({
  type,
  record,
}: {
  type: RecordType;
  record: { id: string; displayName: string | null } | null;
}) {
  if (record === null) return <Text span>an unknown record</Text>;
  const name = record.displayName ?? `Unnamed ${TYPE_LABEL[type].toLowerCase()}`;
  const root = (props: Record<string, unknown>) =>
    type === 'person' ? (
      <Link to="/people/$id" params={{ id: record.id }} {...props} />
    ) : type === 'company' ? (
      <Link to="/companies/$id" params={{ id: record.id }} {...props} />
    ) : (
      <Link to="/deals/$id" params={{ id: record.id }} {...props} />
    );
  return <Anchor renderRoot={root}>{name}</Anchor>;
}

/** A merge not undone yet can be undone: the absorbed record is split off again, with its systems. */
function OperationRow({
  type,
  recordId,
  operation,
}: {
  type: RecordType;
  recordId: string;
  operation: IdentityOperation;
}) {
  const [confirming, setConfirming] = useState(false);
  const [requested, setRequested] = useState(false);
  const unmerge = useUnmergeMutation(recordId);
  const undoable = operation.kind === 'merge' && operation.status === 'applied';
  const absorbedName = operation.absorbed?.displayName ?? 'the merged record';

  const confirm = () =>
    unmerge.mutate(
      // One key per merge: every Undo of it, retries and second clicks included, is one unmerge.
      { operationId: operation.id, idempotencyKey: `unmerge:${operation.id}` },
      {
        onSuccess: (outcome) => {
          setConfirming(false);
          setRequested(outcome.kind === 'accepted');
          notifications.show({
            message:
              outcome.kind === 'applied'
                ? `${outcome.restored.displayName ?? absorbedName} is a record of its own again.`
                : 'Undo accepted: it applies in a moment.',
          });
        },
      },
    );

  return (
    <Paper withBorder p="sm" component="li" style={{ listStyle: 'none' }}>
      <Stack gap={4}>
        <Group gap="xs" wrap="wrap">
          <Text fw={600} size="sm">
            {operation.kind === 'merge' ? 'Merge' : 'Unmerge'}
          </Text>
          <StatusBadge label={operation.status} tone={STATUS_TONE[operation.status]} />
          {operation.appliedAt !== null && (
            <Text size="xs" c="dimmed">
              <time dateTime={operation.appliedAt}>{formatDateTime(operation.appliedAt)}</time>
            </Text>
          )}
        </Group>
        <Text size="sm">
          <RecordLink type={type} record={operation.absorbed} />{' '}
          {operation.kind === 'merge' ? 'into' : 'split from'}{' '}
          <RecordLink type={type} record={operation.survivor} />
          {operation.undoneAt !== null && `, undone ${formatDateTime(operation.undoneAt)}`}
        </Text>
        {undoable && requested && (
          <Text size="sm" c="dimmed" role="status">
            Undo requested: it applies in a moment.
          </Text>
        )}
        {undoable && !requested && (
          <Group>
            <Button
              size="xs"
              variant="default"
              onClick={() => setConfirming(true)}
              aria-label={`Undo merge of ${absorbedName}`}
            >
              Undo
            </Button>
          </Group>
        )}
      </Stack>
      <ConfirmDialog
        opened={confirming}
        title="Undo this merge?"
        confirmLabel="Unmerge"
        loading={unmerge.isPending}
        onConfirm={confirm}
        onCancel={() => {
          setConfirming(false);
          unmerge.reset();
        }}
      >
        <Text size="sm">
          {absorbedName} becomes a record of its own again, with the systems it had. Each record's systems are
          sent its own values; what only the other had is cleared.
        </Text>
        {unmerge.error !== null && (
          <Text size="sm" c="red.8" role="alert">
            {describeError(unmerge.error).message}
          </Text>
        )}
      </ConfirmDialog>
    </Paper>
  );
}

/** The record's merges and unmerges, newest first, with Undo for a merge still in force. */
export function IdentityTab({ type, id }: { type: RecordType; id: string }) {
  const query = useQuery(identityOperationsQuery(id));
  if (query.isPending)
    return (
      <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading identity operations">
        {[0, 1].map((n) => (
          <Skeleton key={n} height={64} />
        ))}
      </Stack>
    );
  if (query.isError) return <ErrorState error={query.error} onRetry={() => void query.refetch()} />;
  const operations = query.data.data;
  if (operations.length === 0)
    return (
      <EmptyState title="Never merged">
        Merges of this {TYPE_LABEL[type].toLowerCase()} with another appear here, with Undo.
      </EmptyState>
    );
  return (
    <Stack component="ul" gap="xs" p={0} m={0}>
      {operations.map((operation) => (
        <OperationRow key={operation.id} type={type} recordId={id} operation={operation} />
      ))}
    </Stack>
  );
}
