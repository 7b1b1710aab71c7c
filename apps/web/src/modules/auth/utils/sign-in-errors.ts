/** The `?error=` codes the OpenID Connect callback redirects with (and link_invalid), in words. */
const MESSAGES: Readonly<Record<string, string>> = {
  access_denied: 'Sign-in was cancelled at the identity provider. Try again when you are ready.',
  not_a_member:
    'That account is not a member of this workspace. Ask an admin to invite your address, or use another account.',
  email_unverified:
    'Your identity provider has not verified that email address. Verify it there, then try again.',
  domain_not_allowed: 'Accounts of that email domain may not sign in here. Use your work account.',
  invalid_state: 'The sign-in took too long or was started in another tab. Please start again.',
  invalid_token: 'The answer from your identity provider could not be verified. Please sign in again.',
  provider_unavailable:
    'Your identity provider could not be reached. Try again in a moment, or use an email link.',
  oidc_disabled: 'Signing in with an identity provider is not set up here. Use an email link.',
  link_invalid: 'This link was used or has expired. Ask for a new one below.',
};

export function signInErrorMessage(code: unknown): string | null {
  if (typeof code !== 'string' || code === '') return null;
  return Object.hasOwn(MESSAGES, code)
    ? (MESSAGES[code] ?? null)
    : 'Sign-in did not complete. Please try again.';
}
