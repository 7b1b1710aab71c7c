import { z } from 'zod';

export const oidcStartQuery = z.object({
  returnTo: z
    .string()
    .optional()
    .describe('Where to land after signing in: a path of this app (`/people`); anything else lands on `/`.'),
});
export type OidcStartQuery = z.output<typeof oidcStartQuery>;

/**
 * Where the provider sends the browser: `code` after consent, `error` (e.g. access_denied)
 * without, and whatever else it adds (`scope`, `iss`…), all handed to the code exchange.
 */
export const oidcCallbackQuery = z.looseObject({
  state: z.string().optional(),
  code: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});
export type OidcCallbackQuery = z.output<typeof oidcCallbackQuery>;

export const signInProvidersView = z.object({
  oidc: z.object({
    enabled: z.boolean().describe('Whether "Sign in with …" is offered (OIDC_ISSUER_URL is set).'),
    label: z.string().describe('The name on the button.'),
  }),
  magicLink: z.object({ enabled: z.boolean().describe('"Email me a link" is always offered.') }),
});
export type SignInProvidersView = z.output<typeof signInProvidersView>;
