import { createRoute } from '@tanstack/react-router';
import { dryRunReportQuery } from '../modules/dry-run/api';
import { REPORT_TABS, type ReportTab } from '../modules/dry-run/utils/tabs';
import { mappingsQuery } from '../modules/mappings/api';
import { adminRoute } from './admin';
import { lazyPage } from './lazy-page';

const loadDryRun = () => import('../modules/dry-run/DryRunPage');
const loadMappings = () => import('../modules/mappings/MappingsPage');
const DryRunPage = lazyPage(loadDryRun, (m) => m.DryRunPage);
const MappingsPage = lazyPage(loadMappings, (m) => m.MappingsPage);

const oneOf = <T extends string>(values: readonly T[], raw: unknown): T | undefined =>
  typeof raw === 'string' && (values as readonly string[]).includes(raw) ? (raw as T) : undefined;

export const dryRunRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/connections/$id/dry-run',
  validateSearch: (raw: Record<string, unknown>): { tab?: ReportTab } => {
    const tab = oneOf(REPORT_TABS, raw.tab);
    return tab === undefined ? {} : { tab };
  },
  loader: ({ context, params }) => {
    void loadDryRun();
    void context.queryClient.prefetchQuery(dryRunReportQuery(params.id));
  },
  component: function DryRunRoute() {
    const { id } = dryRunRoute.useParams();
    const { tab = 'links' } = dryRunRoute.useSearch();
    const navigate = dryRunRoute.useNavigate();
    return (
      <DryRunPage
        id={id}
        tab={tab}
        onTabChange={(next) => void navigate({ search: { tab: next }, replace: true })}
      />
    );
  },
});

export const mappingsRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/connections/$id/mappings',
  validateSearch: (raw: Record<string, unknown>): { entity?: string } =>
    typeof raw.entity === 'string' && /^[a-z_]{1,32}$/.test(raw.entity) ? { entity: raw.entity } : {},
  loader: ({ context, params }) => {
    void loadMappings();
    void context.queryClient.prefetchQuery(mappingsQuery(params.id));
  },
  component: function MappingsRoute() {
    const { id } = mappingsRoute.useParams();
    const { entity } = mappingsRoute.useSearch();
    const navigate = mappingsRoute.useNavigate();
    return (
      <MappingsPage
        id={id}
        entity={entity}
        onEntityChange={(next) => void navigate({ search: { entity: next }, replace: true })}
      />
    );
  },
});

export const connectionPagesRoutes = [dryRunRoute, mappingsRoute] as const;
