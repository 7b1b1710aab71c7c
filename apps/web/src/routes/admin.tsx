import { Anchor, Box, Stack, Text, Title } from '@mantine/core';
import { createRoute, Link, Outlet, redirect } from '@tanstack/react-router';
import { appRoute } from './app';

/** Thrown by the admin pages' guard: a signed-in member who is not an admin. */
export class AdminsOnlyError extends Error {
  constructor() {
    super('Only admins can open this page.');
    this.name = 'AdminsOnlyError';
  }
}

function AdminsOnly() {
  return (
    <Box component="section" p="md" maw={640}>
      <Stack gap="sm">
        <Title order={1} size="h3">
          Admins only
        </Title>
        <Text>
          This page is for the workspace's admins: connections, policies and sync health. Ask an admin if
          something needs changing.
        </Text>
        <Anchor component={Link} to="/people">
          Go to People
        </Anchor>
      </Stack>
    </Box>
  );
}

/**
 * Every `/admin/*` page: the role is checked before anything of the page loads, so a sales member
 * fetches none of its data (the API answers such a member 403 anyway).
 */
export const adminRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/admin',
  beforeLoad: ({ context }) => {
    if (context.session.role !== 'admin') throw new AdminsOnlyError();
  },
  errorComponent: ({ error }) => {
    if (error instanceof AdminsOnlyError) return <AdminsOnly />;
    throw error;
  },
  component: Outlet,
});

export const adminIndexRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/admin/connections' });
  },
});
