import { createRouter } from '@tanstack/react-router';
import { setUnauthorizedHandler } from '../api/client';
import { queryClient } from '../api/query-client';
import { adminIndexRoute, adminRoute } from './admin';
import { configRoutes } from './admin-config';
import { connectionPagesRoutes } from './admin-connection-pages';
import { connectionsRoutes } from './admin-connections';
import { healthRoutes } from './admin-health';
import { opsRoutes } from './admin-ops';
import { appRoute, indexRoute } from './app';
import { conflictsRoute, duplicateRoute, duplicatesRoute } from './inbox';
import { PageSkeleton } from './lazy-page';
import { companiesRoute, dealsRoute, peopleRoute } from './lists';
import { companyRoute, dealRoute, personRoute } from './records';
import { RouteError, rootRoute } from './root';
import { signInLinkRoute, signInRoute } from './sign-in';

const routeTree = rootRoute.addChildren([
  signInRoute,
  signInLinkRoute,
  appRoute.addChildren([
    indexRoute,
    peopleRoute,
    companiesRoute,
    dealsRoute,
    personRoute,
    companyRoute,
    dealRoute,
    conflictsRoute,
    duplicatesRoute,
    duplicateRoute,
    adminRoute.addChildren([
      adminIndexRoute,
      ...connectionsRoutes,
      ...connectionPagesRoutes,
      ...configRoutes,
      ...healthRoutes,
      ...opsRoutes,
    ]),
  ]),
]);

export const router = createRouter({
  routeTree,
  context: { queryClient },
  defaultPreload: 'intent',
  // Queries decide freshness; the router only starts them.
  defaultPreloadStaleTime: 0,
  defaultPendingComponent: PageSkeleton,
  defaultErrorComponent: RouteError,
  scrollRestoration: true,
});

// A 401 anywhere: to the sign-in page, then back (unsaved drafts wait in sessionStorage).
// The location being loaded, not the address bar: a loader's request may fail before the URL changes.
setUnauthorizedHandler(() => {
  const { pathname, searchStr } = router.state.location;
  if (pathname.startsWith('/sign-in')) return;
  void router.navigate({ to: '/sign-in', search: { returnTo: `${pathname}${searchStr}` } });
});

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
