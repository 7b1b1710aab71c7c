import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text } from '@mantine/core';
import type { CreatedApiKey } from '../api';

/** The new key's secret, this once: copy it now, it is never shown again. */
export function SecretDialog({ created, onClose }: { created: CreatedApiKey | null; onClose: () => void }) {
  return (
    <Modal
      opened={created !== null}
      onClose={onClose}
      title={created === null ? '' : `Key “${created.name}” created`}
      centered
      closeButtonProps={{ 'aria-label': 'Close' }}
      closeOnClickOutside={false}
    >
      {created !== null && (
        <Stack>
          <Alert color="orange" variant="outline" title="Copy it now" role="status">
            <Text size="sm">
              This is the only time the key is shown: Syncline keeps only a hash of it. If it is lost, revoke
              it and create another.
            </Text>
          </Alert>
          <Code
            block
            aria-label="The new API key"
            style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}
          >
            {created.key}
          </Code>
          <Text size="sm" c="dimmed">
            Send it as <Code>Authorization: Bearer …</Code>. Role: {created.role}.
          </Text>
          <Group justify="flex-end">
            <CopyButton value={created.key}>
              {({ copied, copy }) => (
                <Button variant="default" onClick={copy}>
                  {copied ? 'Copied' : 'Copy key'}
                </Button>
              )}
            </CopyButton>
            <Button color="blue.8" onClick={onClose}>
              I have stored it
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
