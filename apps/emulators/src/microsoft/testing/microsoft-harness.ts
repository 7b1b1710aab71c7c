import { Client, GraphError } from '@microsoft/microsoft-graph-client';
import type { FaultSpec } from '../../common/faults';
import { type RunningEmulators, startEmulators } from '../../emulators';
import { expectGraph } from './graph-schema';

export type Json = Record<string, unknown>;

/** A call of the emulator's control API with its status, whatever it is (tests assert refusals too). */
export async function controlRequest<T = unknown>(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** A mailbox to test with: its principal name and a live grant's access token. */
export interface GraphAccount {
  upn: string;
  userId: string;
  accessToken: string;
  client: Client;
}

/**
 * Every emulator started as the app starts them, seen from Microsoft 365: an app registered,
 * users with grants issued through the control API's shortcut, and the official Graph SDK
 * pointed at the emulator (HTTPS, so the SDK sends the bearer token; NODE_EXTRA_CA_CERTS,
 * set by the test setup, makes Node trust it). Node 22's own fetch is the SDK's fetch.
 */
export class MicrosoftHarness {
  private clientId = '';

  private constructor(readonly running: RunningEmulators) {}

  static async start(): Promise<MicrosoftHarness> {
    return new MicrosoftHarness(await startEmulators({ hubspotPort: 0, googlePort: 0 }));
  }

  /** `https://localhost:PORT`: Graph's base URL and the control API's origin. */
  get url(): string {
    return this.running.microsoftUrl;
  }

  /** Forgets every user, app and event, then registers a fresh app. */
  async reset(): Promise<void> {
    await this.control('POST', '/_emulator/reset');
    const app = await this.expectControl<{ clientId: string }>(201, 'POST', '/_emulator/microsoft/apps', {});
    this.clientId = app.clientId;
  }

  /** A user with a grant for the app (`scopes`: by default read and write in every area), and an SDK client holding its token. */
  async account(
    upn: string,
    scopes: readonly string[] = [
      'offline_access',
      'User.Read',
      'Calendars.ReadWrite',
      'Mail.ReadWrite',
      'Tasks.ReadWrite',
    ],
  ): Promise<GraphAccount> {
    const user = await this.expectControl<{ id: string }>(201, 'POST', '/_emulator/microsoft/users', {
      userPrincipalName: upn,
    });
    const grant = await this.expectControl<{ accessToken: string }>(
      201,
      'POST',
      `/_emulator/microsoft/users/${upn}/grants`,
      {
        clientId: this.clientId,
        scopes,
      },
    );
    return { upn, userId: user.id, accessToken: grant.accessToken, client: this.client(grant.accessToken) };
  }

  /** The official SDK as an app builds it, with `accessToken` as its bearer token. */
  client(accessToken: string): Client {
    return Client.init({
      authProvider: (done) => done(null, accessToken),
      baseUrl: this.url,
      customHosts: new Set([new URL(this.url).hostname]),
    });
  }

  async fault(spec: Omit<FaultSpec, 'service'>): Promise<void> {
    await this.expectControl(201, 'POST', '/_emulator/faults', { service: 'microsoft', ...spec });
  }

  control<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    return controlRequest<T>(this.url, method, path, body);
  }

  /** A control call that must answer `status`; its body. */
  async expectControl<T = unknown>(status: number, method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.control<T>(method, path, body);
    if (res.status !== status)
      throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async close(): Promise<void> {
    await this.running.close();
  }
}

/**
 * The status and Graph error body of an SDK call that must fail. The SDK keeps the body's
 * `error` object, serialised, in GraphError.body; it is put back in its envelope here.
 */
export async function graphFailure(
  call: Promise<unknown>,
): Promise<{ status: number; body: Json; headers?: Headers }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof GraphError) {
      const inner = typeof error.body === 'string' ? (JSON.parse(error.body) as Json) : {};
      return {
        status: error.statusCode,
        body: { error: inner },
        ...(error.headers ? { headers: error.headers } : {}),
      };
    }
    throw error;
  }
  throw new Error('expected the Graph call to fail');
}

/**
 * A failing SDK call as a test asserts it: its status, Graph's error code and message (the
 * body checked against the spec's `odataError` first), and its headers where the SDK kept them.
 */
export async function graphRefusal(
  call: Promise<unknown>,
): Promise<{ status: number; code: unknown; message: unknown; headers?: Headers }> {
  const { status, body, headers } = await graphFailure(call);
  expectGraph('odataError', body);
  const error = body.error as Json;
  return { status, code: error.code, message: error.message, ...(headers ? { headers } : {}) };
}
