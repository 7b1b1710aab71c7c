import { ApiError, describeError } from '../../../api/errors';

/** What to tell an admin when a member change is refused, with what to do about it. */
export function memberChangeError(error: unknown): { title: string; message: string } {
  if (error instanceof ApiError && error.code === 'last_admin')
    return {
      title: 'The workspace needs an admin',
      message:
        'This is the last active admin: the workspace would be left without anyone to manage it. Make another member admin first (they must have signed in once), then try again.',
    };
  if (error instanceof ApiError && error.code === 'member_exists')
    return {
      title: 'Already a member',
      message: 'That address is a member (or invited) already: change their role in the list instead.',
    };
  if (error instanceof ApiError && error.status === 404)
    return { title: 'No longer a member', message: 'Someone removed them meanwhile; the list is refreshed.' };
  const { title, message } = describeError(error);
  return { title, message };
}

/** A loose check before sending: the API validates the address for real. */
export const looksLikeEmail = (value: string): boolean => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value.trim());
