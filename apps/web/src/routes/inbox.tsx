import { createRoute } from '@tanstack/react-router';
import { openConflictsQuery } from '../modules/conflicts/api';
import { duplicateQuery, openDuplicatesQuery } from '../modules/duplicates/api';
import { appRoute } from './app';
import { lazyPage } from './lazy-page';

const loadConflicts = () => import('../modules/conflicts/ConflictsPage');
const loadDuplicates = () => import('../modules/duplicates/DuplicatesPage');
const loadDuplicate = () => import('../modules/duplicates/DuplicateDetailPage');
const ConflictsPage = lazyPage(loadConflicts, (m) => m.ConflictsPage);
const DuplicatesPage = lazyPage(loadDuplicates, (m) => m.DuplicatesPage);
const DuplicateDetailPage = lazyPage(loadDuplicate, (m) => m.DuplicateDetailPage);

export const conflictsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/conflicts',
  loader: ({ context }) => {
    void loadConflicts();
    void context.queryClient.prefetchInfiniteQuery(openConflictsQuery());
  },
  component: ConflictsPage,
});

export const duplicatesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/duplicates',
  loader: ({ context }) => {
    void loadDuplicates();
    void context.queryClient.prefetchInfiniteQuery(openDuplicatesQuery());
  },
  component: DuplicatesPage,
});

export const duplicateRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/duplicates/$id',
  loader: ({ context, params }) => {
    void loadDuplicate();
    void context.queryClient.prefetchQuery(duplicateQuery(params.id));
  },
  component: function DuplicateRoute() {
    const { id } = duplicateRoute.useParams();
    return <DuplicateDetailPage id={id} />;
  },
});
