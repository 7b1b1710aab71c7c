import { z } from 'zod';
import { ROLES } from '../auth/principal';

const email = z
  .email({ pattern: z.regexes.html5Email, error: 'must be an email address' })
  .max(254)
  .transform((value) => value.trim().toLowerCase());

export const memberView = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string().nullable(),
  role: z.enum(ROLES),
  status: z.enum(['active', 'invited']).describe('`invited` until their first sign-in.'),
  createdAt: z.iso.datetime(),
  lastSignInAt: z.iso.datetime().nullable(),
});
export type MemberView = z.output<typeof memberView>;

export const memberListView = z.object({ data: z.array(memberView) });
export type MemberListView = z.output<typeof memberListView>;

export const inviteMemberBody = z.strictObject({
  email,
  name: z.string().trim().min(1).max(200).optional(),
  role: z.enum(ROLES),
});
export type InviteMemberBody = z.output<typeof inviteMemberBody>;

export const changeMemberBody = z.strictObject({ role: z.enum(ROLES) });
export type ChangeMemberBody = z.output<typeof changeMemberBody>;

export { email as emailField };
