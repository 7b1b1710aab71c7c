import { createRoute, redirect } from '@tanstack/react-router';
import { policySetQuery, sourcesQuery } from '../modules/policies/api';
import { isPolicyEntity } from '../modules/policies/utils/policy-draft';
import { replayQuery, replaysQuery } from '../modules/replays/api';
import { adminRoute } from './admin';
import { lazyPage } from './lazy-page';

const loadPolicies = () => import('../modules/policies/PoliciesPage');
const loadReplays = () => import('../modules/replays/ReplaysPage');
const loadReplay = () => import('../modules/replays/ReplayPage');
const PoliciesPage = lazyPage(loadPolicies, (m) => m.PoliciesPage);
const ReplaysPage = lazyPage(loadReplays, (m) => m.ReplaysPage);
const ReplayPage = lazyPage(loadReplay, (m) => m.ReplayPage);

export const policiesRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/policies',
  beforeLoad: ({ location }) => {
    if (location.pathname.replace(/\/$/, '') === '/admin/policies')
      throw redirect({ to: '/admin/policies/$entity', params: { entity: 'person' }, replace: true });
  },
});

export const policiesEntityRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/policies/$entity',
  // An entity type the API does not know opens the first one rather than a page of errors.
  beforeLoad: ({ params }) => {
    if (!isPolicyEntity(params.entity))
      throw redirect({ to: '/admin/policies/$entity', params: { entity: 'person' }, replace: true });
  },
  loader: ({ context, params }) => {
    void loadPolicies();
    if (!isPolicyEntity(params.entity)) return;
    void context.queryClient.prefetchQuery(policySetQuery(params.entity));
    void context.queryClient.prefetchQuery(sourcesQuery());
  },
  component: function PoliciesRoute() {
    const { entity } = policiesEntityRoute.useParams();
    return isPolicyEntity(entity) ? <PoliciesPage entity={entity} /> : null;
  },
});

export const replaysRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/replays',
  loader: ({ context }) => {
    void loadReplays();
    void context.queryClient.prefetchInfiniteQuery(replaysQuery());
  },
  component: ReplaysPage,
});

export const replayRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/replays/$id',
  loader: ({ context, params }) => {
    void loadReplay();
    void context.queryClient.prefetchQuery(replayQuery(params.id.toLowerCase()));
  },
  component: function ReplayRoute() {
    const { id } = replayRoute.useParams();
    return <ReplayPage id={id.toLowerCase()} />;
  },
});

export const configRoutes = [policiesRoute, policiesEntityRoute, replaysRoute, replayRoute] as const;
