import { Alert, Group, Loader, Stack, Text } from '@mantine/core';
import { useRouter } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { ApiError, describeError } from '../../api/errors';
import { consumeMagicLink } from './api';
import { EmailLinkForm } from './components/EmailLinkForm';
import { SignInFrame } from './components/SignInFrame';
import { safeReturnTo } from './utils/return-to';

type State =
  | { kind: 'signing-in' }
  | { kind: 'no-token' }
  | { kind: 'invalid' }
  | { kind: 'failed'; error: unknown };

/** The token travels in the fragment and is POSTed: a mail scanner fetching the link cannot spend it. */
function tokenFromFragment(): string | null {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const token = params.get('token');
  return token === null || token === '' ? null : token;
}

export function SignInLinkPage() {
  const router = useRouter();
  const [token] = useState(tokenFromFragment);
  const [state, setState] = useState<State>(token === null ? { kind: 'no-token' } : { kind: 'signing-in' });

  useEffect(() => {
    if (token === null) return;
    // The token leaves the address bar (and the history) at once.
    window.history.replaceState(window.history.state, '', window.location.pathname);
    let live = true;
    consumeMagicLink(token).then(
      ({ returnTo }) => {
        if (live) router.history.replace(safeReturnTo(returnTo));
      },
      (error: unknown) => {
        if (!live) return;
        const invalid = error instanceof ApiError && (error.status === 400 || error.status === 410);
        setState(invalid ? { kind: 'invalid' } : { kind: 'failed', error });
      },
    );
    return () => {
      live = false;
    };
  }, [token, router]);

  if (state.kind === 'signing-in')
    return (
      <SignInFrame title="Signing you in">
        <Group gap="sm" role="status">
          <Loader size="sm" aria-hidden />
          <Text>Checking your link…</Text>
        </Group>
      </SignInFrame>
    );

  const { title, message } =
    state.kind === 'invalid'
      ? {
          title: 'This link was used or has expired',
          message: 'Links work once, for 15 minutes. Ask for a new one.',
        }
      : state.kind === 'no-token'
        ? {
            title: 'This link is incomplete',
            message: 'Open the link from the email as it is, or ask for a new one.',
          }
        : { title: describeError(state.error).title, message: describeError(state.error).message };

  return (
    <SignInFrame title="Sign in">
      <Stack gap="md">
        <Alert color="red" variant="outline" title={title} role="alert">
          {message}
        </Alert>
        <EmailLinkForm returnTo="/" />
      </Stack>
    </SignInFrame>
  );
}
