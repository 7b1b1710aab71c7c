import { createRoute } from '@tanstack/react-router';
import { adminRoute } from './admin';

// Placeholder: replaced by the dead-letters, audit, api-keys and members modules.
export const deadLettersRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/dead-letters',
  component: () => <h1>Dead letters</h1>,
});
export const auditLogRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/audit-log',
  component: () => <h1>Audit log</h1>,
});
export const apiKeysRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/api-keys',
  component: () => <h1>API keys</h1>,
});
export const membersRoute = createRoute({
  getParentRoute: () => adminRoute,
  path: '/members',
  component: () => <h1>Members</h1>,
});

export const opsRoutes = [deadLettersRoute, auditLogRoute, apiKeysRoute, membersRoute] as const;
