import { createRoute } from '@tanstack/react-router';
import { connectionsOverviewQuery } from '../modules/connections/api';
import { parseConnectionsSearch } from '../modules/connections/utils/connect-outcome';
import { adminRoute } from './admin';
import { lazyPage } from './lazy-page';

const loadConnectionsPage = () => import('../modules/connections/ConnectionsPage');
const ConnectionsPage = lazyPage(loadConnectionsPage, (m) => m.ConnectionsPage);

/** Every connection, its health and actions; `?connected=` / `?oauthError=` is how a consent ended. */
export const connectionsRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/connections',
  validateSearch: parseConnectionsSearch,
  loader: ({ context }) => {
    void loadConnectionsPage();
    void context.queryClient.prefetchQuery(connectionsOverviewQuery());
  },
  component: function ConnectionsRoute() {
    const search = connectionsRoute.useSearch();
    return <ConnectionsPage search={search} />;
  },
});

export const connectionsRoutes = [connectionsRoute] as const;
