import { createRoute, useNavigate } from '@tanstack/react-router';
import { apiKeysQuery } from '../modules/api-keys/api';
import { auditActorsQuery, auditLogQuery } from '../modules/audit/api';
import { type AuditSearch, parseAuditSearch } from '../modules/audit/utils/audit-search';
import { deadLettersQuery, letterConnectionsQuery } from '../modules/dead-letters/api';
import {
  type DeadLetterSearch,
  parseDeadLetterSearch,
} from '../modules/dead-letters/utils/dead-letter-search';
import { membersQuery } from '../modules/members/api';
import { adminRoute } from './admin';
import { lazyPage } from './lazy-page';

const loadDeadLetters = () => import('../modules/dead-letters/DeadLettersPage');
const loadAuditLog = () => import('../modules/audit/AuditLogPage');
const loadApiKeys = () => import('../modules/api-keys/ApiKeysPage');
const loadMembers = () => import('../modules/members/MembersPage');
const DeadLettersPage = lazyPage(loadDeadLetters, (m) => m.DeadLettersPage);
const AuditLogPage = lazyPage(loadAuditLog, (m) => m.AuditLogPage);
const ApiKeysPage = lazyPage(loadApiKeys, (m) => m.ApiKeysPage);
const MembersPage = lazyPage(loadMembers, (m) => m.MembersPage);

export const deadLettersRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/dead-letters',
  validateSearch: (raw: Record<string, unknown>): DeadLetterSearch => parseDeadLetterSearch(raw),
  loaderDeps: ({ search }) => ({ search }),
  loader: ({ context, deps }) => {
    void loadDeadLetters();
    void context.queryClient.prefetchInfiniteQuery(deadLettersQuery(deps.search));
    void context.queryClient.prefetchQuery(letterConnectionsQuery);
  },
  component: function DeadLettersRoute() {
    const search = deadLettersRoute.useSearch();
    const navigate = useNavigate();
    return (
      <DeadLettersPage
        search={search}
        onSearchChange={(next) => void navigate({ to: '/admin/dead-letters', search: next, replace: true })}
      />
    );
  },
});

export const auditLogRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/audit-log',
  validateSearch: (raw: Record<string, unknown>): AuditSearch => parseAuditSearch(raw),
  loaderDeps: ({ search }) => ({ search }),
  loader: ({ context, deps }) => {
    void loadAuditLog();
    void context.queryClient.prefetchInfiniteQuery(auditLogQuery(deps.search));
    void context.queryClient.prefetchQuery(auditActorsQuery);
  },
  component: function AuditLogRoute() {
    const search = auditLogRoute.useSearch();
    const navigate = useNavigate();
    return (
      <AuditLogPage
        search={search}
        onSearchChange={(next) => void navigate({ to: '/admin/audit-log', search: next, replace: true })}
      />
    );
  },
});

export const apiKeysRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/api-keys',
  loader: ({ context }) => {
    void loadApiKeys();
    void context.queryClient.prefetchQuery(apiKeysQuery);
  },
  component: ApiKeysPage,
});

export const membersRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/members',
  loader: ({ context }) => {
    void loadMembers();
    void context.queryClient.prefetchQuery(membersQuery);
  },
  component: MembersPage,
});

export const opsRoutes = [deadLettersRoute, auditLogRoute, apiKeysRoute, membersRoute] as const;
