/**
 * Where to go after signing in: a path of this app only (never another origin, `//host`,
 * or back to the sign-in pages); anything else goes home.
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.includes('\\'))
    return '/';
  if (value === '/sign-in' || value.startsWith('/sign-in/') || value.startsWith('/sign-in?')) return '/';
  return value;
}
