import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** An application registered with the identity platform: its id, secret and redirect URIs. */
export interface MicrosoftApp {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** The name the consent page shows. */
  displayName: string;
}

export class MicrosoftApps {
  private readonly byId = new Map<string, MicrosoftApp>();

  register(
    input: { clientId?: string; clientSecret?: string; redirectUris?: string[]; displayName?: string } = {},
  ): MicrosoftApp {
    const app: MicrosoftApp = {
      clientId: input.clientId ?? randomUUID(),
      clientSecret: input.clientSecret ?? randomBytes(24).toString('base64url'),
      redirectUris: input.redirectUris ?? [],
      displayName: input.displayName ?? 'Syncline',
    };
    this.byId.set(app.clientId, app);
    return app;
  }

  get(clientId: string): MicrosoftApp | undefined {
    return this.byId.get(clientId);
  }

  /** Whether `secret` is the app's, compared in constant time. */
  authenticates(clientId: string, secret: string): boolean {
    const app = this.byId.get(clientId);
    if (!app) return false;
    const [a, b] = [Buffer.from(app.clientSecret), Buffer.from(secret)];
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const parseUrl = (s: string): URL | undefined => {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
};

/**
 * Whether `uri` is one of the app's redirect URIs: exactly, except that an http loopback URI
 * matches on any port (RFC 8252 §7.3, as the identity platform allows native apps).
 */
export function isRegisteredRedirect(app: MicrosoftApp, uri: string): boolean {
  if (app.redirectUris.includes(uri)) return true;
  const sent = parseUrl(uri);
  if (sent?.protocol !== 'http:' || !LOOPBACK_HOSTS.has(sent.hostname)) return false;
  const portless = (u: URL) => `${u.hostname}${u.pathname}${u.search}`;
  return app.redirectUris.some((registered) => {
    const r = parseUrl(registered);
    return r?.protocol === 'http:' && portless(r) === portless(sent);
  });
}
