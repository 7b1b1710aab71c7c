import { createRoute } from '@tanstack/react-router';
import { recordQuery } from '../modules/records/api';
import { appRoute } from './app';
import { lazyPage } from './lazy-page';
import { parseRecordSearch } from './utils/record-search';

const loadRecordPage = () => import('../modules/records/RecordPage');
const RecordPage = lazyPage(loadRecordPage, (m) => m.RecordPage);

function recordRoute(
  type: 'person' | 'company' | 'deal',
  path: '/people/$id' | '/companies/$id' | '/deals/$id',
) {
  const route = createRoute({
    getParentRoute: () => appRoute,
    path,
    validateSearch: parseRecordSearch,
    loader: ({ context, params }) => {
      void loadRecordPage();
      void context.queryClient.prefetchQuery(recordQuery(type, params.id.toLowerCase()));
    },
    component: function RecordRoute() {
      const { id } = route.useParams();
      const { tab, asOf } = route.useSearch();
      return <RecordPage type={type} id={id} tab={tab} asOf={asOf} />;
    },
  });
  return route;
}

export const personRoute = recordRoute('person', '/people/$id');
export const companyRoute = recordRoute('company', '/companies/$id');
export const dealRoute = recordRoute('deal', '/deals/$id');
