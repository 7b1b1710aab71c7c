import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** An application registered with the identity platform: its id, secret and redirect URIs. */
export interface MicrosoftApp {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** The name the consent page shows. */
  displayName: string;
  /**
   * The emulator's own app (`GET /_emulator/microsoft/oauth-client`): any http loopback
   * redirect URI is its, on any port and path, so a locally run API connects with it unregistered.
   */
  anyLoopbackRedirect?: boolean;
}

/** A GUID-shaped id from a name: the same on every start with the same seed. */
const stableGuid = (name: string): string => {
  const hex = createHash('sha256').update(name).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

export class MicrosoftApps {
  private readonly byId = new Map<string, MicrosoftApp>();
  /** The emulator's own app, the same for a seed (so a reset or a restart keeps it). */
  readonly builtIn: MicrosoftApp;

  constructor(seed: number) {
    this.builtIn = {
      clientId: stableGuid(`syncline-emulator-app:${seed}`),
      clientSecret: createHash('sha256').update(`syncline-emulator-secret:${seed}`).digest('base64url'),
      redirectUris: [],
      displayName: 'Syncline',
      anyLoopbackRedirect: true,
    };
    this.byId.set(this.builtIn.clientId, this.builtIn);
  }

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
  if (app.anyLoopbackRedirect) return true;
  const portless = (u: URL) => `${u.hostname}${u.pathname}${u.search}`;
  return app.redirectUris.some((registered) => {
    const r = parseUrl(registered);
    return r?.protocol === 'http:' && portless(r) === portless(sent);
  });
}
