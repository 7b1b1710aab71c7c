import { type ChildProcess, spawn } from 'node:child_process';
import type { EmulatorUrls } from './emulator-client';

// How the system's processes are started and configured, shared by the e2e harness
// (e2e/support/system.ts) and `npm run demo` (scripts/demo.ts). No vitest here.

/** The entry points, run as the npm scripts run them (`node -r @swc-node/register <entry>`). */
export const ENTRY = {
  emulators: 'apps/emulators/src/main.ts',
  api: 'apps/sync-api/src/main.ts',
  workers: 'apps/workers/src/main.ts',
} as const;
export type ProcessKind = keyof typeof ENTRY;

/**
 * Spawns one of the system's processes from `cwd` with exactly `env`; every line it prints
 * (stdout and stderr) goes to `onLine`. `detached` puts it in a process group of its own, so
 * a Ctrl-C in the terminal reaches only the parent, which then stops it in its own order.
 */
export function spawnEntry(
  kind: ProcessKind,
  options: { cwd: string; env: NodeJS.ProcessEnv; onLine: (line: string) => void; detached?: boolean },
): ChildProcess {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', ENTRY[kind]], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const capture = (stream: NodeJS.ReadableStream) => {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) options.onLine(line);
    });
    stream.on('end', () => {
      if (partial) options.onLine(partial);
      partial = '';
    });
  };
  capture(child.stdout!);
  capture(child.stderr!);
  return child;
}

/** Whether GET `url` answers 2xx within `timeoutMs`. */
export async function httpOk(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** The emulators print one `{"hubspot": url, "google": url}` line once they listen. */
export function emulatorUrlsFrom(lines: readonly string[]): EmulatorUrls | undefined {
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      const parsed = JSON.parse(line) as Partial<EmulatorUrls>;
      if (parsed.hubspot && parsed.google)
        return {
          hubspot: parsed.hubspot,
          google: parsed.google,
          ...(parsed.smtp ? { smtp: parsed.smtp } : {}),
          ...(parsed.microsoft ? { microsoft: parsed.microsoft } : {}),
          ...(parsed.microsoftCa ? { microsoftCa: parsed.microsoftCa } : {}),
        };
    } catch {
      // not the line we want
    }
  }
  return undefined;
}

/** Whether the emulators' control APIs answer. */
export async function emulatorsReady(urls: EmulatorUrls): Promise<boolean> {
  return (
    (await httpOk(`${urls.hubspot}/_emulator/hubspot/portals`)) &&
    (await httpOk(`${urls.google}/_emulator/google/oauth-client`)) &&
    (urls.microsoft === undefined || (await httpOk(`${urls.microsoft}/_emulator/microsoft/oauth-client`)))
  );
}

export interface ProviderSettingsInput {
  emulators: EmulatorUrls;
  /** Our HubSpot app, as installed in the emulator's portals. */
  hubspotApp: { appId: number; clientId: string; clientSecret: string };
  /** The Google emulator's OAuth client (`emulatorClient(urls).google.oauthClient()`). */
  googleClient: { clientId: string; clientSecret: string };
  /** The Microsoft emulator's own app (`emulatorClient(urls).microsoft.oauthClient()`). */
  microsoftClient?: { clientId: string; clientSecret: string };
  gmailPushToken: string;
  /** The API's URL: where providers call back. */
  apiUrl: string;
  pullIntervalMs: number;
  coalesceMs?: number;
}

/** The settings that point the API and the workers at the emulators, as our app. */
export function providerSettings(input: ProviderSettingsInput): Record<string, string> {
  const { emulators, hubspotApp, googleClient } = input;
  return {
    HUBSPOT_API_BASE_URL: emulators.hubspot,
    HUBSPOT_TOKEN_URL: `${emulators.hubspot}/oauth/v1/token`,
    HUBSPOT_CLIENT_ID: hubspotApp.clientId,
    HUBSPOT_CLIENT_SECRET: hubspotApp.clientSecret,
    HUBSPOT_APP_ID: String(hubspotApp.appId),
    // The connect flow's consent pages are the emulators' (a browser can open them).
    HUBSPOT_OAUTH_AUTHORIZE_URL: `${emulators.hubspot}/oauth/authorize`,
    GOOGLE_OAUTH_AUTHORIZE_URL: `${emulators.google}/o/oauth2/v2/auth`,
    GOOGLE_API_ROOT_URL: `${emulators.google}/`,
    GOOGLE_TOKEN_URL: `${emulators.google}/token`,
    GOOGLE_CLIENT_ID: googleClient.clientId,
    GOOGLE_CLIENT_SECRET: googleClient.clientSecret,
    GMAIL_PUSH_TOKEN: input.gmailPushToken,
    // Graph and the identity platform on one origin, as the emulator serves them.
    ...(emulators.microsoft && input.microsoftClient
      ? {
          MICROSOFT_GRAPH_URL: emulators.microsoft,
          MICROSOFT_LOGIN_URL: emulators.microsoft,
          MICROSOFT_CLIENT_ID: input.microsoftClient.clientId,
          MICROSOFT_CLIENT_SECRET: input.microsoftClient.clientSecret,
        }
      : {}),
    PUBLIC_BASE_URL: input.apiUrl,
    // Source links open records on the emulator's own HubSpot pages.
    HUBSPOT_APP_URL: emulators.hubspot,
    // People sign in with the Google emulator as their OpenID provider, and get their links by mail
    // from its catch-all.
    OIDC_ISSUER_URL: emulators.google,
    OIDC_CLIENT_ID: googleClient.clientId,
    OIDC_CLIENT_SECRET: googleClient.clientSecret,
    ...(emulators.smtp ? { SMTP_URL: emulators.smtp } : {}),
    PULL_INTERVAL_MS: String(input.pullIntervalMs),
    ...(input.coalesceMs === undefined ? {} : { SYNC_COALESCE_MS: String(input.coalesceMs) }),
  };
}
