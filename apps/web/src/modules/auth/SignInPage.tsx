import { Alert, Button, Divider, Skeleton, Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { oidcStartUrl, providersQuery } from './api';
import { EmailLinkForm } from './components/EmailLinkForm';
import { SignInFrame } from './components/SignInFrame';
import { safeReturnTo } from './utils/return-to';
import { signInErrorMessage } from './utils/sign-in-errors';

export function SignInPage({ returnTo, error }: { returnTo?: string; error?: string }) {
  const target = safeReturnTo(returnTo);
  const providers = useQuery(providersQuery);
  const problem = signInErrorMessage(error);
  // Without the providers' answer, the email link is still offered (it is always on).
  const oidc = providers.data?.oidc.enabled === true;

  return (
    <SignInFrame title="Sign in">
      {problem !== null && (
        <Alert color="red" variant="outline" title="You are not signed in" role="alert">
          {problem}
        </Alert>
      )}
      <Stack gap="md">
        {providers.isPending ? (
          <Skeleton height={36} radius="md" />
        ) : (
          oidc && (
            <>
              <Button component="a" href={oidcStartUrl(target)} size="md">
                Sign in with {providers.data?.oidc.label ?? 'Google'}
              </Button>
              <Divider label="or" labelPosition="center" />
            </>
          )
        )}
        <EmailLinkForm returnTo={target} />
      </Stack>
    </SignInFrame>
  );
}
