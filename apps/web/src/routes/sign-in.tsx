import { createRoute, redirect } from '@tanstack/react-router';
import { sessionQuery } from '../modules/auth/api';
import { safeReturnTo } from '../modules/auth/utils/return-to';
import { lazyPage } from './lazy-page';
import { rootRoute } from './root';

const loadSignIn = () => import('../modules/auth/SignInPage');
const loadSignInLink = () => import('../modules/auth/SignInLinkPage');
const SignInPage = lazyPage(loadSignIn, (m) => m.SignInPage);
const SignInLinkPage = lazyPage(loadSignInLink, (m) => m.SignInLinkPage);

interface SignInSearch {
  returnTo?: string;
  error?: string;
}

export const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-in',
  validateSearch: (raw: Record<string, unknown>): SignInSearch => ({
    returnTo: typeof raw.returnTo === 'string' ? raw.returnTo : undefined,
    error: typeof raw.error === 'string' ? raw.error : undefined,
  }),
  // Someone signed in already goes where they were heading.
  beforeLoad: async ({ context, search }) => {
    const session = await context.queryClient.ensureQueryData(sessionQuery).catch(() => null);
    if (session !== null && search.error === undefined)
      throw redirect({ href: safeReturnTo(search.returnTo) });
  },
  loader: () => void loadSignIn(),
  component: function SignInRoute() {
    const search = signInRoute.useSearch();
    return <SignInPage returnTo={search.returnTo} error={search.error} />;
  },
});

export const signInLinkRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-in/link',
  loader: () => void loadSignInLink(),
  component: SignInLinkPage,
});
