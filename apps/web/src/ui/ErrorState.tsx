import { Alert, Button, Code, Group, Text } from '@mantine/core';
import { describeError } from '../api/errors';

/** A failed load: what happened, the API's code, and Retry. */
export function ErrorState({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { title, message, code } = describeError(error);
  return (
    <Alert color="red" variant="outline" title={title} role="alert" my="md">
      <Text size="sm">{message}</Text>
      <Group mt="sm" gap="sm">
        {code !== null && (
          <Text size="xs" c="dimmed">
            Code <Code>{code}</Code>
          </Text>
        )}
        {onRetry !== undefined && (
          <Button size="xs" variant="default" onClick={onRetry}>
            Retry
          </Button>
        )}
      </Group>
    </Alert>
  );
}
