import { Anchor, Box, Stack, Text, Title } from '@mantine/core';
import type { QueryClient } from '@tanstack/react-query';
import {
  createRootRouteWithContext,
  type ErrorComponentProps,
  Link,
  Outlet,
  useRouter,
} from '@tanstack/react-router';
import { ErrorState } from '../ui/ErrorState';

export interface RouterContext {
  queryClient: QueryClient;
}

function NotFound() {
  return (
    <Stack component="main" p="xl" align="center">
      <Title order={1}>Page not found</Title>
      <Text>There is nothing at this address.</Text>
      <Anchor component={Link} to="/people">
        Go to People
      </Anchor>
    </Stack>
  );
}

/** A route that failed before its page could show (the session could not be read): say so, offer Retry. */
export function RouteError({ error, reset }: ErrorComponentProps) {
  const router = useRouter();
  return (
    <Box component="main" p="md" maw={640} mx="auto">
      <Title order={1} size="h3">
        This page could not be opened
      </Title>
      <ErrorState
        error={error}
        onRetry={() => {
          reset();
          void router.invalidate();
        }}
      />
    </Box>
  );
}

export const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: NotFound,
});
