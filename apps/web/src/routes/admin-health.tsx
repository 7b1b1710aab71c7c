import { createRoute } from '@tanstack/react-router';
import {
  connectionHistoryQuery,
  DEFAULT_RANGE,
  healthNowQuery,
  workspaceHistoryQuery,
} from '../modules/health/api';
import { mostBehind } from '../modules/health/utils/series';
import { adminRoute } from './admin';
import { lazyPage } from './lazy-page';

const loadHealth = () => import('../modules/health/HealthPage');
const HealthPage = lazyPage(loadHealth, (m) => m.HealthPage);

export const healthRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/health',
  loader: ({ context }) => {
    void loadHealth();
    void context.queryClient.prefetchQuery(workspaceHistoryQuery(DEFAULT_RANGE));
    // The lag chart opens on the connection most behind: its history as soon as that is known.
    void context.queryClient
      .fetchQuery(healthNowQuery())
      .then((now) => {
        const first = mostBehind(now.connections);
        if (first) return context.queryClient.prefetchQuery(connectionHistoryQuery(DEFAULT_RANGE, first.id));
      })
      .catch(() => undefined);
  },
  component: HealthPage,
});

export const healthRoutes = [healthRoute] as const;
