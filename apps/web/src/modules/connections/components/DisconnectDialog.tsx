import { Alert, Button, Group, Modal, Radio, Stack, Text, TextInput } from '@mantine/core';
import { useEffect, useState } from 'react';
import { describeError } from '../../../api/errors';

/**
 * Disconnect for good, keeping what the connection brought or erasing what only it knew; erasing
 * asks for the connection's name typed out, since it cannot be undone.
 */
export function DisconnectDialog({
  name,
  provider,
  opened,
  loading,
  error,
  onConfirm,
  onCancel,
}: {
  name: string;
  provider: string;
  opened: boolean;
  loading: boolean;
  error: unknown;
  onConfirm: (data: 'keep' | 'erase') => void;
  onCancel: () => void;
}) {
  const [data, setData] = useState<'keep' | 'erase'>('keep');
  const [typed, setTyped] = useState('');
  useEffect(() => {
    if (opened) {
      setData('keep');
      setTyped('');
    }
  }, [opened]);
  const confirmed = data === 'keep' || typed.trim() === name;

  return (
    <Modal
      opened={opened}
      onClose={onCancel}
      title={`Disconnect ${name}?`}
      centered
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      <Stack>
        <Text size="sm">
          Nothing is read from or written to this {provider} account again, and its credentials are deleted.
          This cannot be undone: to sync it later, connect it as a new connection.
        </Text>
        <Radio.Group
          label="What happens to the data it brought"
          value={data}
          onChange={(value) => setData(value === 'erase' ? 'erase' : 'keep')}
        >
          <Stack mt="xs" gap="sm">
            <Radio
              value="keep"
              label="Keep it"
              description="People, companies and deals keep the values it brought; writes still owed to it are dropped."
            />
            <Radio
              value="erase"
              label="Erase it"
              description="Also delete its change history and every record only it knew. Records another system knows stay."
            />
          </Stack>
        </Radio.Group>
        {data === 'erase' && (
          <TextInput
            label={`Type "${name}" to confirm erasing`}
            value={typed}
            onChange={(event) => setTyped(event.currentTarget.value)}
            autoComplete="off"
            data-autofocus
          />
        )}
        {error !== null && error !== undefined && (
          <Alert color="red" variant="light" title={describeError(error).title} role="alert">
            <Text size="sm" c="dark.7">
              {describeError(error).message}
            </Text>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel} disabled={loading}>
            Cancel
          </Button>
          <Button color="red.8" onClick={() => onConfirm(data)} loading={loading} disabled={!confirmed}>
            {data === 'erase' ? 'Disconnect and erase' : 'Disconnect'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
