import { Alert, Button, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { describeError } from '../../../api/errors';
import { useMagicLinkMutation } from '../api';

/** "Email me a link": the answer is the same whether or not the address is a member's. */
export function EmailLinkForm({ returnTo }: { returnTo: string }) {
  const [email, setEmail] = useState('');
  const send = useMagicLinkMutation();

  if (send.isSuccess)
    return (
      <Alert color="green" variant="outline" title="Check your inbox" role="status">
        <Text size="sm">
          If <strong>{email}</strong> may sign in here, a sign-in link is on its way. It works once, for 15
          minutes.
        </Text>
        <Button variant="subtle" size="xs" mt="xs" onClick={() => send.reset()}>
          Use another address
        </Button>
      </Alert>
    );

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        send.mutate({ email: email.trim(), returnTo });
      }}
    >
      <Stack gap="sm">
        <TextInput
          label="Email"
          type="email"
          name="email"
          autoComplete="email"
          required
          value={email}
          onChange={(event) => setEmail(event.currentTarget.value)}
          placeholder="you@company.com"
        />
        {send.isError && (
          <Alert color="red" variant="outline" role="alert">
            {describeError(send.error).message}
          </Alert>
        )}
        <Button type="submit" variant="default" loading={send.isPending}>
          Email me a link
        </Button>
      </Stack>
    </form>
  );
}
