import { createRoute } from '@tanstack/react-router';
import { adminRoute } from './admin';

// Placeholder: replaced by the dry-run and mappings modules.
export const dryRunRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/connections/$id/dry-run',
  component: () => <h1>Dry-run report</h1>,
});

export const mappingsRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/connections/$id/mappings',
  component: () => <h1>Field mappings</h1>,
});

export const connectionPagesRoutes = [dryRunRoute, mappingsRoute] as const;
