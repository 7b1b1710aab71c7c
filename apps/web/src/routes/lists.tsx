import { createRoute, useNavigate } from '@tanstack/react-router';
import { type ListType, listQuery } from '../modules/records-list/api';
import { type ListSearch, parseListSearch } from '../modules/records-list/utils/list-search';
import { appRoute } from './app';
import { lazyPage } from './lazy-page';

const loadListPage = () => import('../modules/records-list/ListPage');
const ListPage = lazyPage(loadListPage, (m) => m.ListPage);

function listRoute(type: ListType, path: '/people' | '/companies' | '/deals') {
  const route = createRoute({
    getParentRoute: () => appRoute,
    path,
    validateSearch: (raw: Record<string, unknown>): ListSearch => parseListSearch(raw),
    loaderDeps: ({ search }) => ({ search }),
    loader: ({ context, deps }) => {
      void loadListPage();
      void context.queryClient.prefetchInfiniteQuery(listQuery(type, deps.search));
    },
    component: function ListRoute() {
      const search = route.useSearch();
      const navigate = useNavigate();
      return (
        <ListPage
          type={type}
          search={search}
          onSearchChange={(next) => void navigate({ to: path, search: next, replace: true })}
        />
      );
    },
  });
  return route;
}

export const peopleRoute = listRoute('person', '/people');
export const companiesRoute = listRoute('company', '/companies');
export const dealsRoute = listRoute('deal', '/deals');
