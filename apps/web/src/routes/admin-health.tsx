import { createRoute } from '@tanstack/react-router';
import { adminRoute } from './admin';

// Placeholder: replaced by the health module (sync health dashboard).
export const healthRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/health',
  component: () => <h1>Sync health</h1>,
});

export const healthRoutes = [healthRoute] as const;
