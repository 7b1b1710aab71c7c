import { createRoute } from '@tanstack/react-router';
import { adminRoute } from './admin';

// Placeholder: replaced by the mappings, policies and replays modules.
export const policiesRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/policies',
  component: () => <h1>Policies</h1>,
});

export const replaysRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/replays',
  component: () => <h1>Replays</h1>,
});

export const configRoutes = [policiesRoute, replaysRoute] as const;
