import type { ProviderKey } from '@syncline/core';
import { z } from 'zod';
import { safeReturnTo } from '../auth/oidc/return-to';

/** Whose consent page an admin is sent to: one Google or Microsoft consent covers several connections. */
export const OAUTH_PROVIDERS = ['hubspot', 'google', 'microsoft'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

/** The connections one consent can create, per OAuth provider. */
export const OAUTH_PRODUCTS = {
  hubspot: ['hubspot'],
  google: ['google-calendar', 'gmail', 'google-tasks'],
  microsoft: ['microsoft-calendar', 'microsoft-mail', 'microsoft-todo'],
} as const satisfies Record<OAuthProvider, readonly ProviderKey[]>;
export type GoogleProduct = (typeof OAUTH_PRODUCTS.google)[number];
export type MicrosoftProduct = (typeof OAUTH_PRODUCTS.microsoft)[number];

export const oauthProviderParam = z.enum(OAUTH_PROVIDERS);

const productList = <const P extends readonly [ProviderKey, ...ProviderKey[]]>(products: P) =>
  z
    .array(z.enum(products))
    .min(1)
    .refine((list) => new Set(list).size === list.length, 'must not repeat a product');

export const startOAuthBody = z
  .strictObject({
    products: productList([...OAUTH_PRODUCTS.hubspot, ...OAUTH_PRODUCTS.google, ...OAUTH_PRODUCTS.microsoft])
      .optional()
      .describe(
        'The connections to create. Google: any of google-calendar, gmail, google-tasks (required). ' +
          'Microsoft: any of microsoft-calendar, microsoft-mail, microsoft-todo (required). ' +
          'HubSpot: omit it (or ["hubspot"]).',
      ),
    returnTo: z
      .string()
      .max(2048)
      .refine(
        (path) => safeReturnTo(path) === path,
        'must be a path of this app: one leading "/", no scheme, host, "//" or backslash',
      )
      .optional()
      .describe(
        'A path of this app (`/admin/connections`) to send the browser back to after consent, with ' +
          '`connected=<ids>` or `oauthError=<code>` added to its query; without it the callback answers JSON.',
      ),
    dryRun: z
      .boolean()
      .default(false)
      .describe(
        'The connections the consent creates start in dry run (as `dryRun` on `POST /api/v1/connections`). ' +
          'A connection that already exists (a reconnect) keeps its own mode.',
      ),
  })
  .default({ dryRun: false });
export type StartOAuthBody = z.output<typeof startOAuthBody>;

/** The per-provider check of `products`, run once the provider is known. */
export const productsFor = {
  hubspot: productList(OAUTH_PRODUCTS.hubspot).default(['hubspot']),
  google: productList(OAUTH_PRODUCTS.google),
  microsoft: productList(OAUTH_PRODUCTS.microsoft),
} as const satisfies Record<OAuthProvider, z.ZodType<readonly ProviderKey[] | undefined>>;

export const startOAuthView = z.object({
  authorizeUrl: z
    .url()
    .describe("The provider's consent page: open it in the browser of the account's owner."),
  state: z.string().describe('Single use; binds the consent to this workspace and API key.'),
  expiresAt: z.iso.datetime().describe('The state is refused after this (10 minutes).'),
});
export type StartOAuthView = z.output<typeof startOAuthView>;

/** Where the provider sends the browser: `code` after consent, `error` (e.g. access_denied) without. */
export const oauthCallbackQuery = z
  .object({
    state: z.string().min(1).max(512),
    code: z.string().min(1).max(4096).optional(),
    error: z.string().min(1).max(200).optional(),
    error_description: z.string().max(1000).optional(),
  })
  .refine((q) => q.code !== undefined || q.error !== undefined, 'code or error is required');
export type OAuthCallbackQuery = z.output<typeof oauthCallbackQuery>;
