/**
 * Where to send the browser after sign-in: a path of this app (a single leading `/`, no
 * scheme, host or backslash, no control characters), else the home page. An open redirect
 * through the sign-in would let a link to our domain land on anyone's.
 */
export function safeReturnTo(requested: string | undefined): string {
  if (requested === undefined || requested.length > 2048) return '/';
  if (!requested.startsWith('/') || requested.startsWith('//')) return '/';
  // Browsers read `\` as `/` (`/\evil.example`), and strip tabs and newlines before parsing.
  if ([...requested].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    return '/';
  const resolved = new URL(requested, 'https://app.invalid');
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  // `/.//evil.example` resolves to a protocol-relative `//evil.example`.
  return resolved.origin === 'https://app.invalid' && !path.startsWith('//') ? path : '/';
}
