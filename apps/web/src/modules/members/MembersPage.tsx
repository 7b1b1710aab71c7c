import { Alert, Button, Select, Skeleton, Stack, Text, Title, Tooltip, VisuallyHidden } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { DataTable, type DataTableColumn } from 'mantine-datatable';
import { useState } from 'react';
import { SESSION_KEY, type Session } from '../../api/query-client';
import { ConfirmDialog } from '../../ui/ConfirmDialog';
import { EmptyState } from '../../ui/EmptyState';
import { ErrorState } from '../../ui/ErrorState';
import { StatusBadge } from '../../ui/StatusBadge';
import { formatDateTime, relativeTime } from '../../ui/utils/time';
import { type Member, membersQuery, type Role, useChangeRole, useRemoveMember } from './api';
import { InviteForm } from './components/InviteForm';
import { memberChangeError } from './utils/member-errors';

const ROLE_OPTIONS = [
  { value: 'sales', label: 'Sales' },
  { value: 'admin', label: 'Admin' },
];
const ROLE_WORDS: Record<Role, string> = {
  admin: 'can manage connections, policies, dead letters, members and API keys, besides the records',
  sales: 'can read and edit records and settle conflicts and duplicates, but not open the admin pages',
};

const nameOf = (member: Member) => member.name ?? member.email;

/** The workspace's people: invite, change a role, remove. */
export function MembersPage() {
  const wide = useMediaQuery('(min-width: 48em)', true);
  const members = useQuery(membersQuery);
  const client = useQueryClient();
  const me = client.getQueryData<Session>(SESSION_KEY)?.member.id;
  const changeRole = useChangeRole();
  const remove = useRemoveMember();
  const [roleChange, setRoleChange] = useState<{ member: Member; role: Role } | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [refusal, setRefusal] = useState<{ title: string; message: string } | null>(null);
  const rows = members.data?.data ?? [];

  const columns: DataTableColumn<Member>[] = [
    {
      accessor: 'name',
      title: 'Name',
      render: (member) => (
        <Stack gap={0}>
          <Text size="sm" fw={500} style={{ overflowWrap: 'anywhere' }}>
            {member.name ?? '—'}
            {member.id === me ? ' (you)' : ''}
          </Text>
          {!wide && (
            <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
              {member.email}
            </Text>
          )}
        </Stack>
      ),
    },
    ...(wide
      ? [
          {
            accessor: 'email',
            title: 'Email',
            render: (member: Member) => (
              <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                {member.email}
              </Text>
            ),
          },
        ]
      : []),
    {
      accessor: 'role',
      title: 'Role',
      render: (member) => (
        <Select
          aria-label={`Role of ${nameOf(member)}`}
          data={ROLE_OPTIONS}
          value={member.role}
          allowDeselect={false}
          size="xs"
          w={110}
          disabled={changeRole.isPending && changeRole.variables?.id === member.id}
          onChange={(value) => {
            if (value !== null && value !== member.role) setRoleChange({ member, role: value as Role });
          }}
        />
      ),
    },
    {
      accessor: 'status',
      title: 'Status',
      render: (member) =>
        member.status === 'invited' ? (
          <Tooltip label={`Invited ${formatDateTime(member.createdAt)}; active at their first sign-in`}>
            <span>
              <StatusBadge label="Invited" tone="info" />
            </span>
          </Tooltip>
        ) : (
          <StatusBadge label="Active" tone="success" />
        ),
    },
    ...(wide
      ? [
          {
            accessor: 'lastSignInAt',
            title: 'Last sign-in',
            render: (member: Member) =>
              member.lastSignInAt === null ? (
                <Text span size="sm" c="dimmed">
                  Never
                </Text>
              ) : (
                <Tooltip label={formatDateTime(member.lastSignInAt)}>
                  <Text span size="sm">
                    {relativeTime(member.lastSignInAt)}
                  </Text>
                </Tooltip>
              ),
          },
        ]
      : []),
    {
      accessor: 'id',
      title: <VisuallyHidden>Actions</VisuallyHidden>,
      textAlign: 'right',
      render: (member) => (
        <Button
          size="compact-xs"
          variant="default"
          aria-label={`Remove ${nameOf(member)}`}
          onClick={() => {
            remove.reset();
            setRemoving(member);
          }}
        >
          Remove
        </Button>
      ),
    },
  ];

  return (
    <Stack gap="md">
      <div>
        <Title order={1}>Members</Title>
        <Text c="dimmed" size="sm" maw={640}>
          The people who sign in to this workspace. Admins manage the sync; salespeople work with the records.
        </Text>
      </div>
      <InviteForm />
      {refusal !== null && (
        <Alert
          color="red"
          variant="outline"
          role="alert"
          title={refusal.title}
          withCloseButton
          closeButtonLabel="Dismiss"
          onClose={() => setRefusal(null)}
        >
          <Text size="sm">{refusal.message}</Text>
        </Alert>
      )}
      {members.isPending ? (
        <Stack gap="xs" role="status" aria-busy="true" aria-label="Loading members">
          {Array.from({ length: 4 }, (_, i) => (
            <Skeleton key={i} height={40} />
          ))}
        </Stack>
      ) : members.isError ? (
        <ErrorState error={members.error} onRetry={() => void members.refetch()} />
      ) : rows.length === 0 ? (
        <EmptyState title="No members">Invite the people who should sign in.</EmptyState>
      ) : (
        <DataTable<Member>
          aria-label="Members"
          withTableBorder
          borderRadius="md"
          records={rows}
          columns={columns}
          idAccessor="id"
          fetching={members.isRefetching}
        />
      )}

      <ConfirmDialog
        opened={roleChange !== null}
        title={
          roleChange === null
            ? ''
            : `Make ${nameOf(roleChange.member)} ${roleChange.role === 'admin' ? 'an admin' : 'a salesperson'}?`
        }
        confirmLabel={roleChange?.role === 'admin' ? 'Make admin' : 'Make sales'}
        loading={changeRole.isPending}
        onCancel={() => setRoleChange(null)}
        onConfirm={() => {
          if (roleChange === null) return;
          const { member, role } = roleChange;
          setRefusal(null);
          changeRole.mutate(
            { id: member.id, role },
            {
              onSuccess: () =>
                notifications.show({
                  color: 'green',
                  title: 'Role changed',
                  message: `${nameOf(member)} is ${role === 'admin' ? 'an admin' : 'a salesperson'} from their next page.`,
                }),
              onError: (error) => setRefusal(memberChangeError(error)),
              onSettled: () => setRoleChange(null),
            },
          );
        }}
      >
        {roleChange !== null && (
          <Text size="sm">
            {roleChange.role === 'admin' ? 'An admin' : 'A salesperson'} {ROLE_WORDS[roleChange.role]}. It
            takes effect from their next request.
            {roleChange.member.id === me && roleChange.role === 'sales'
              ? ' You will no longer see the admin pages.'
              : ''}
          </Text>
        )}
      </ConfirmDialog>

      <ConfirmDialog
        opened={removing !== null}
        title={removing === null ? '' : `Remove ${nameOf(removing)}?`}
        confirmLabel="Remove member"
        danger
        loading={remove.isPending}
        onCancel={() => setRemoving(null)}
        onConfirm={() => {
          if (removing === null) return;
          const member = removing;
          setRefusal(null);
          remove.mutate(member.id, {
            onSuccess: () =>
              notifications.show({
                color: 'green',
                title: 'Member removed',
                message: `${nameOf(member)} is signed out and can no longer sign in.`,
              }),
            onError: (error) => setRefusal(memberChangeError(error)),
            onSettled: () => setRemoving(null),
          });
        }}
      >
        {removing !== null && (
          <Text size="sm">
            {removing.status === 'invited'
              ? `The invitation is withdrawn: the link mailed to ${removing.email} no longer signs them in.`
              : `Their sessions end at once: ${nameOf(removing)} is signed out everywhere and can no longer sign in.`}{' '}
            Their past edits keep their name. You can invite {removing.email} again later.
            {removing.id === me ? ' You are removing yourself: you will be signed out.' : ''}
          </Text>
        )}
      </ConfirmDialog>
    </Stack>
  );
}
