import { Alert, Button, Group, Modal, Radio, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { describeError } from '../../../api/errors';
import { type CreatedApiKey, type Role, useCreateApiKey } from '../api';

/** Name and role of a new key; the created key goes to `onCreated` (its secret shown once). */
export function CreateKeyDialog({
  opened,
  onClose,
  onCreated,
}: {
  opened: boolean;
  onClose: () => void;
  onCreated: (key: CreatedApiKey) => void;
}) {
  const create = useCreateApiKey();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('sales');
  const [touched, setTouched] = useState(false);
  const nameError = touched && name.trim() === '' ? 'Give the key a name: what or who uses it' : null;
  const close = () => {
    create.reset();
    setName('');
    setRole('sales');
    setTouched(false);
    onClose();
  };
  return (
    <Modal
      opened={opened}
      onClose={close}
      title="Create an API key"
      centered
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setTouched(true);
          if (name.trim() === '') return;
          create.mutate(
            { name: name.trim(), role },
            {
              onSuccess: (key) => {
                close();
                onCreated(key);
              },
            },
          );
        }}
      >
        <Stack>
          <TextInput
            label="Name"
            description="What uses it, e.g. “Nightly export”"
            value={name}
            maxLength={100}
            onChange={(event) => setName(event.currentTarget.value)}
            onBlur={() => setTouched(true)}
            error={nameError}
            required
            data-autofocus
          />
          <Radio.Group
            label="Role"
            description="What the key may do"
            value={role}
            onChange={(value) => setRole(value as Role)}
          >
            <Stack gap="xs" mt="xs">
              <Radio value="sales" label="Sales: read and edit records, settle conflicts and duplicates" />
              <Radio value="admin" label="Admin: everything, connections, policies and keys included" />
            </Stack>
          </Radio.Group>
          {create.isError && (
            <Alert color="red" variant="outline" role="alert" title={describeError(create.error).title}>
              <Text size="sm">{describeError(create.error).message}</Text>
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={close} disabled={create.isPending}>
              Cancel
            </Button>
            <Button type="submit" color="blue.8" loading={create.isPending}>
              Create key
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
