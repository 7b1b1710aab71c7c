import { createRoute } from '@tanstack/react-router';
import { adminRoute } from './admin';

// Placeholder: replaced by the connections module (list, connect, dry-run report).
export const connectionsRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/connections',
  component: () => <h1>Connections</h1>,
});

export const connectionsRoutes = [connectionsRoute] as const;
