import { Button, Group, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import type { QueryClient } from '@tanstack/react-query';
import { newIdempotencyKey } from '../../../api/client';
import { describeError } from '../../../api/errors';
import { unmerge } from '../api';

/** "Merged" with an Undo button; one Undo is one unmerge however often it is retried. */
export function showMergedNotification(client: QueryClient, operationId: string, names: string) {
  const id = `merge-${operationId}`;
  const key = newIdempotencyKey();
  const undo = () => {
    notifications.update({
      id,
      loading: true,
      title: 'Undoing the merge…',
      message: names,
      autoClose: false,
    });
    unmerge(client, operationId, key).then(
      ({ applied }) =>
        notifications.update({
          id,
          loading: false,
          color: 'green',
          title: 'Merge undone',
          message: applied ? 'The two records are separate again.' : 'Accepted; they separate in a moment.',
          autoClose: 6_000,
        }),
      (error: unknown) =>
        notifications.update({
          id,
          loading: false,
          color: 'red',
          title: 'Could not undo the merge',
          message: <UndoMessage text={describeError(error).message} onUndo={undo} />,
          autoClose: false,
        }),
    );
  };
  notifications.show({
    id,
    color: 'green',
    title: 'Merged',
    message: <UndoMessage text={names} onUndo={undo} />,
    autoClose: 15_000,
  });
}

function UndoMessage({ text, onUndo }: { text: string; onUndo: () => void }) {
  return (
    <Group justify="space-between" wrap="nowrap" gap="sm">
      <Text size="sm">{text}</Text>
      <Button size="xs" variant="default" onClick={onUndo}>
        Undo
      </Button>
    </Group>
  );
}
