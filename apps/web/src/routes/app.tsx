import { createRoute, redirect } from '@tanstack/react-router';
import { sessionQuery } from '../modules/auth/api';
import { AppLayout } from '../modules/shell/AppLayout';
import { rootRoute } from './root';

/** Every page behind sign-in: a visitor without a session goes to /sign-in and comes back. */
export const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: async ({ context, location }) => {
    const session = await context.queryClient.ensureQueryData(sessionQuery);
    if (session === null) throw redirect({ to: '/sign-in', search: { returnTo: location.href } });
    return { session };
  },
  component: function AppRoute() {
    const { session } = appRoute.useRouteContext();
    return <AppLayout session={session} />;
  },
});

export const indexRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/people' });
  },
});
