import type { AddressInfo } from 'node:net';
import { calendar, type calendar_v3, auth as googleAuth } from 'googleapis/build/src/apis/calendar';
import { gmail, type gmail_v1 } from 'googleapis/build/src/apis/gmail';
import { tasks, type tasks_v1 } from 'googleapis/build/src/apis/tasks';
import type { EmulatedProvider, EmulatorContext } from '../../common/context';
import { registerControlRoutes } from '../../common/control.routes';
import { FaultRegistry, type FaultSpec } from '../../common/faults';
import { RequestLog } from '../../common/request-log';
import { createGoogleEmulator } from '../google.emulator';

// Each API's own entry point (what `google.calendar(...)` calls), loaded alone: importing
// the `googleapis` barrel costs seconds per test file.

export type OAuth2Client = InstanceType<typeof googleAuth.OAuth2>;

export interface CreatedUser {
  email: string;
  accessToken: string;
  refreshToken: string;
  clientId: string;
  clientSecret: string;
}

/** The Google emulator alone on a free port, with a clock the test moves by hand. */
export class GoogleHarness {
  private clockMs = Date.now();
  readonly ctx: EmulatorContext;
  readonly emulator: EmulatedProvider;
  url = '';

  constructor(seed = 1) {
    this.ctx = {
      faults: new FaultRegistry(),
      requests: new RequestLog(),
      seed,
      now: () => this.clockMs,
    };
    this.emulator = createGoogleEmulator(this.ctx);
    registerControlRoutes(this.emulator.app, this.ctx, () => {
      this.ctx.faults.clear();
      this.ctx.requests.clear();
      this.emulator.reset();
    });
  }

  static async start(seed = 1): Promise<GoogleHarness> {
    const harness = new GoogleHarness(seed);
    await harness.emulator.app.listen({ host: '127.0.0.1', port: 0 });
    harness.url = `http://127.0.0.1:${(harness.emulator.app.server.address() as AddressInfo).port}`;
    return harness;
  }

  advanceClock(ms: number): void {
    this.clockMs += ms;
  }

  async control<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  async createUser(email: string, extra: Record<string, unknown> = {}): Promise<CreatedUser> {
    const res = await this.control<CreatedUser>('POST', '/_emulator/google/users', { email, ...extra });
    if (res.status >= 300) throw new Error(`creating ${email}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async fault(spec: Omit<FaultSpec, 'service'>): Promise<void> {
    const res = await this.control('POST', '/_emulator/faults', { service: 'google', ...spec });
    if (res.status !== 201) throw new Error(`fault refused: ${JSON.stringify(res.body)}`);
  }

  /** An OAuth2 client whose token endpoint is the emulator's, holding the user's tokens. */
  oauthClient(user: CreatedUser, credentials: { expiry_date?: number } = {}): OAuth2Client {
    const client = new googleAuth.OAuth2({
      clientId: user.clientId,
      clientSecret: user.clientSecret,
      endpoints: {
        oauth2TokenUrl: `${this.url}/token`,
        oauth2RevokeUrl: `${this.url}/revoke`,
        oauth2AuthBaseUrl: `${this.url}/o/oauth2/v2/auth`,
        oauth2FederatedSignonPemCertsUrl: `${this.url}/oauth2/v1/certs`,
        oauth2FederatedSignonJwkCertsUrl: `${this.url}/oauth2/v3/certs`,
      },
    });
    client.setCredentials({
      access_token: user.accessToken,
      refresh_token: user.refreshToken,
      ...credentials,
    });
    return client;
  }

  calendar(auth: OAuth2Client): calendar_v3.Calendar {
    return calendar({ version: 'v3', auth, rootUrl: `${this.url}/` });
  }

  gmail(auth: OAuth2Client): gmail_v1.Gmail {
    return gmail({ version: 'v1', auth, rootUrl: `${this.url}/` });
  }

  tasks(auth: OAuth2Client): tasks_v1.Tasks {
    return tasks({ version: 'v1', auth, rootUrl: `${this.url}/` });
  }

  async close(): Promise<void> {
    await this.emulator.close();
  }
}

/** The HTTP status and body of a call that must fail (googleapis throws a GaxiosError). */
export async function apiError(call: Promise<unknown>): Promise<{ status: number; data: unknown }> {
  try {
    await call;
  } catch (error) {
    const response = (error as { response?: { status: number; data: unknown } }).response;
    if (response) return { status: response.status, data: response.data };
    throw error;
  }
  throw new Error('expected the call to fail');
}
