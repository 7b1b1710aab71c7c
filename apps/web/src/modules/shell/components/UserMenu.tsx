import { Avatar, Menu, Text, UnstyledButton, VisuallyHidden } from '@mantine/core';
import { useRouter } from '@tanstack/react-router';
import type { Session } from '../../auth/api';
import { useSignOutMutation } from '../../auth/api';

const initials = (session: Session) =>
  (session.member.name ?? session.member.email)
    .split(/[\s@.]+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((part) => part[0]?.toUpperCase())
    .join('');

/** Who is signed in, in which role, and Sign out. */
export function UserMenu({ session }: { session: Session }) {
  const router = useRouter();
  const signOut = useSignOutMutation();
  const who = session.member.name ?? session.member.email;
  return (
    <Menu position="bottom-end" withArrow>
      <Menu.Target>
        <UnstyledButton>
          <Avatar color="blue.8" variant="filled" radius="xl" size="md">
            {initials(session)}
          </Avatar>
          <VisuallyHidden>
            Account of {who} ({session.role})
          </VisuallyHidden>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>Signed in as</Menu.Label>
        <Text size="sm" px="sm" fw={500}>
          {who}
        </Text>
        <Text size="xs" px="sm" c="dimmed">
          {session.member.email} · {session.role === 'admin' ? 'Admin' : 'Sales'} · {session.workspace.name}
        </Text>
        <Menu.Divider />
        <Menu.Item
          onClick={() => signOut.mutate(undefined, { onSettled: () => router.history.push('/sign-in') })}
        >
          Sign out
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
