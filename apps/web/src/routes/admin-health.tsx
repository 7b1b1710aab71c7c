import { createRoute } from '@tanstack/react-router';
import { healthNowQuery, workspaceHistoryQuery } from '../modules/health/api';
import { adminRoute } from './admin';
import { lazyPage } from './lazy-page';

const loadHealth = () => import('../modules/health/HealthPage');
const HealthPage = lazyPage(loadHealth, (m) => m.HealthPage);

export const healthRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/health',
  loader: ({ context }) => {
    void loadHealth();
    void context.queryClient.prefetchQuery(healthNowQuery());
    void context.queryClient.prefetchQuery(workspaceHistoryQuery(6));
  },
  component: HealthPage,
});

export const healthRoutes = [healthRoute] as const;
