import { Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** Why there is nothing here, and what to do next (children). */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Stack align="center" gap="xs" py="xl" px="md" ta="center" data-testid="empty-state">
      <Title order={2} size="h4">
        {title}
      </Title>
      {children !== undefined && (
        <Text c="dimmed" component="div" maw={480}>
          {children}
        </Text>
      )}
    </Stack>
  );
}
