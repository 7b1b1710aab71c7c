import { Button, Group, Paper, Select, Text, TextInput } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useState } from 'react';
import { type Role, useInviteMember } from '../api';
import { looksLikeEmail, memberChangeError } from '../utils/member-errors';

const ROLE_OPTIONS = [
  { value: 'sales', label: 'Sales' },
  { value: 'admin', label: 'Admin' },
];

/** Invite by address with a role; the API mails them a sign-in link. */
export function InviteForm() {
  const invite = useInviteMember();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('sales');
  const [checked, setChecked] = useState(false);
  const emailError =
    checked && !looksLikeEmail(email) ? 'Enter an email address, like ada@example.com' : null;
  const refused = invite.isError ? memberChangeError(invite.error) : null;
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="invite-title">
      <Text id="invite-title" fw={600} mb="xs">
        Invite a member
      </Text>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setChecked(true);
          if (!looksLikeEmail(email)) return;
          const address = email.trim();
          invite.mutate(
            { email: address, role, ...(name.trim() === '' ? {} : { name: name.trim() }) },
            {
              onSuccess: () => {
                notifications.show({
                  color: 'green',
                  title: 'Invitation sent',
                  message: `${address} gets an email with a sign-in link; they are active once they use it.`,
                });
                setEmail('');
                setName('');
                setRole('sales');
                setChecked(false);
              },
            },
          );
        }}
      >
        <Group gap="sm" align="flex-start" wrap="wrap">
          <TextInput
            label="Email"
            type="email"
            value={email}
            onChange={(event) => setEmail(event.currentTarget.value)}
            error={emailError ?? (refused === null ? null : refused.message)}
            required
            w={280}
            maw="100%"
          />
          <TextInput
            label="Name (optional)"
            value={name}
            maxLength={200}
            onChange={(event) => setName(event.currentTarget.value)}
            w={220}
            maw="100%"
          />
          <Select
            label="Role"
            data={ROLE_OPTIONS}
            value={role}
            allowDeselect={false}
            onChange={(value) => setRole((value ?? 'sales') as Role)}
            w={140}
          />
          <Button type="submit" color="blue.8" loading={invite.isPending} mt={25}>
            Send invitation
          </Button>
        </Group>
      </form>
    </Paper>
  );
}
