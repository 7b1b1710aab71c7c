import { AppShell, Badge, Burger, Group, NavLink, Text, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { useLiveUpdates } from '../../api/live';
import type { Session } from '../auth/api';
import { conflictKeys } from '../conflicts/api';
import { duplicateKeys } from '../duplicates/api';
import { inboxCountsQuery } from './api';
import { AdminBanner } from './components/AdminBanner';
import { GlobalSearch } from './components/GlobalSearch';
import { UserMenu } from './components/UserMenu';

const NAV = [
  { to: '/people', label: 'People' },
  { to: '/companies', label: 'Companies' },
  { to: '/deals', label: 'Deals' },
  { to: '/conflicts', label: 'Conflicts', count: 'openConflicts' },
  { to: '/duplicates', label: 'Duplicates', count: 'openDuplicates' },
] as const;

/** The admin's pages, shown to admins only (the routes check the role too). */
const ADMIN_NAV = [
  { to: '/admin/connections', label: 'Connections' },
  { to: '/admin/health', label: 'Sync health' },
  { to: '/admin/policies', label: 'Policies' },
  { to: '/admin/replays', label: 'Replays' },
  { to: '/admin/dead-letters', label: 'Dead letters' },
  { to: '/admin/audit-log', label: 'Audit log' },
  { to: '/admin/api-keys', label: 'API keys' },
  { to: '/admin/members', label: 'Members' },
] as const;

/** A page of the navigation, marked current on it and on the pages under it. */
function PageLink({
  to,
  label,
  pathname,
  rightSection = null,
}: {
  to: (typeof NAV)[number]['to'] | (typeof ADMIN_NAV)[number]['to'];
  label: string;
  pathname: string;
  rightSection?: React.ReactNode;
}) {
  const active = pathname === to || pathname.startsWith(`${to}/`);
  return (
    <NavLink
      component={Link}
      to={to}
      label={label}
      active={active}
      aria-current={active ? 'page' : undefined}
      rightSection={rightSection}
    />
  );
}

function CountBadge({ count, label }: { count: number | undefined; label: string }) {
  if (count === undefined || count === 0) return null;
  return (
    <Badge size="sm" variant="filled" color="red.8" circle={count < 10}>
      {count}
      <VisuallyHidden> open {label.toLowerCase()}</VisuallyHidden>
    </Badge>
  );
}

type Counts = { openConflicts: number; openDuplicates: number };

/** The counts follow live events and a 30 s poll; an inbox that is open follows its count. */
function useInboxesFollowCounts(counts: Counts | undefined) {
  const queryClient = useQueryClient();
  const previous = useRef(counts);
  useEffect(() => {
    const before = previous.current;
    previous.current = counts;
    if (before === undefined || counts === undefined) return;
    if (before.openConflicts !== counts.openConflicts)
      void queryClient.invalidateQueries({ queryKey: conflictKeys.all });
    if (before.openDuplicates !== counts.openDuplicates)
      void queryClient.invalidateQueries({ queryKey: duplicateKeys.all });
  }, [counts, queryClient]);
}

/** The signed-in frame: header (burger, search, account), navigation with inbox counts, and the page. */
export function AppLayout({ session }: { session: Session }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const pathname = useRouterState({ select: (state) => state.location.pathname });
  const counts = useQuery(inboxCountsQuery);
  useLiveUpdates();
  useInboxesFollowCounts(counts.data);

  // A page chosen on a phone closes the navigation.
  useEffect(() => close(), [pathname, close]);

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap" gap="sm">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={opened ? 'Close navigation' : 'Open navigation'}
            />
            <Text component={Link} to="/people" fw={700} c="blue.8" size="lg">
              Syncline
            </Text>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <GlobalSearch />
            <UserMenu session={session} />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {NAV.map((item) => (
          <PageLink
            key={item.to}
            to={item.to}
            label={item.label}
            pathname={pathname}
            rightSection={
              'count' in item ? <CountBadge count={counts.data?.[item.count]} label={item.label} /> : null
            }
          />
        ))}
        {session.role === 'admin' && (
          <nav aria-label="Admin">
            <Text size="xs" fw={700} c="dimmed" tt="uppercase" px="sm" mt="md" mb={4}>
              Admin
            </Text>
            {ADMIN_NAV.map((item) => (
              <PageLink key={item.to} to={item.to} label={item.label} pathname={pathname} />
            ))}
            {/* The queue dashboard is the API's own page, not the app's: a full page load. */}
            <NavLink href="/admin/queues" label="Queues" />
          </nav>
        )}
      </AppShell.Navbar>
      <AppShell.Main>
        {session.role === 'admin' && <AdminBanner />}
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
