import { Box, Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The signed-out pages' frame: one centred card, in the page's main landmark. */
export function SignInFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Box component="main" mih="100vh" bg="gray.0" px="md" py={48}>
      <Paper withBorder shadow="sm" p="xl" maw={420} mx="auto">
        <Stack gap="lg">
          <div>
            <Text fw={700} c="blue.8" size="sm">
              Syncline
            </Text>
            <Title order={1} size="h2">
              {title}
            </Title>
          </div>
          {children}
        </Stack>
      </Paper>
    </Box>
  );
}
