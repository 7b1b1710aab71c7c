import { z } from 'zod';
import { emailField } from '../members/members.schemas';
import { ROLES } from './principal';

export const sessionView = z.object({
  member: z.object({ id: z.uuid(), email: z.string(), name: z.string().nullable() }),
  workspace: z.object({ id: z.uuid(), name: z.string() }),
  role: z.enum(ROLES),
  csrfToken: z
    .string()
    .describe(
      'Send as `X-CSRF-Token` with every write made with the session cookie (POST, PUT, PATCH, DELETE).',
    ),
});
export type SessionView = z.output<typeof sessionView>;

export const magicLinkBody = z.strictObject({
  email: emailField,
  returnTo: z
    .string()
    .max(2048)
    .optional()
    .describe('A path of the app to land on after sign-in; `/` otherwise.'),
});
export type MagicLinkBody = z.output<typeof magicLinkBody>;

export const magicLinkSentView = z.object({ sent: z.literal(true) });

export const consumeMagicLinkBody = z.strictObject({
  token: z.string().min(1).max(200).describe('The `token` of the link’s fragment.'),
});
export type ConsumeMagicLinkBody = z.output<typeof consumeMagicLinkBody>;

export const signedInView = z.object({ returnTo: z.string().describe('Where to send the browser now.') });
export type SignedInView = z.output<typeof signedInView>;
