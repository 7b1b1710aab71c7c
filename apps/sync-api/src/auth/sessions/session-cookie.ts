import type { AppConfig } from '../../config/app-config';

/** Where the session's opaque id travels, and how the browser must keep it. */
export interface SessionCookie {
  name: string;
  secure: boolean;
}

/**
 * `__Host-` (and `Secure`) when the app is served over https: the browser then refuses the
 * cookie from plain http and from any other host or path. Over http (local, tests) neither
 * can be set.
 */
export function sessionCookie(config: Pick<AppConfig, 'PUBLIC_BASE_URL'>): SessionCookie {
  const secure = new URL(config.PUBLIC_BASE_URL).protocol === 'https:';
  return { name: secure ? '__Host-syncline_session' : 'syncline_session', secure };
}

/** The origin a cookie-authenticated write must come from. */
export function publicOrigin(config: Pick<AppConfig, 'PUBLIC_BASE_URL'>): string {
  return new URL(config.PUBLIC_BASE_URL).origin;
}
