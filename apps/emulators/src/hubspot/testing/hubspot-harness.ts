import type { AddressInfo } from 'node:net';
import { Client } from '@hubspot/api-client';
import type { EmulatorContext } from '../../common/context';
import { registerControlRoutes } from '../../common/control.routes';
import { FaultRegistry, type FaultSpec } from '../../common/faults';
import { RequestLog } from '../../common/request-log';
import { createHubspotEmulator } from '../hubspot.emulator';
import type { HubspotEmulatorOptions, PortalInput } from '../hubspot-state';

/** A data-plane answer as it left the emulator, for checking against the published schemas. */
export interface CapturedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string | undefined;
  body: string | undefined;
}

export interface CreatedTestPortal {
  portalId: number;
  appId: number;
  clientId: string;
  clientSecret: string;
  accessToken: string;
  refreshToken: string;
  /** The official SDK, pointed at the emulator with this portal's token. */
  client: Client;
}

/**
 * The HubSpot emulator on a free port, built directly (not through startEmulators) so
 * these tests do not depend on the Google emulator, with a clock tests can move.
 */
export class HubspotHarness {
  private nextPortalId = 1000;

  private constructor(
    readonly url: string,
    readonly ctx: EmulatorContext,
    readonly responses: CapturedResponse[],
    private readonly clock: { offset: number },
    private readonly closeApp: () => Promise<void>,
  ) {}

  static async start(options: HubspotEmulatorOptions & { seed?: number } = {}): Promise<HubspotHarness> {
    const clock = { offset: 0 };
    const ctx: EmulatorContext = {
      faults: new FaultRegistry(),
      requests: new RequestLog(),
      seed: options.seed ?? 7,
      now: () => Date.now() + clock.offset,
    };
    const hubspot = createHubspotEmulator(ctx, options);
    registerControlRoutes(hubspot.app, ctx, () => {
      ctx.faults.clear();
      ctx.requests.clear();
      hubspot.reset();
    });
    const captured: CapturedResponse[] = [];
    hubspot.app.addHook('onSend', async (req, reply, payload) => {
      const path = req.url.split('?')[0] ?? req.url;
      if (!path.startsWith('/_emulator')) {
        const contentType = reply.getHeader('content-type');
        captured.push({
          method: req.method,
          path,
          status: reply.statusCode,
          contentType: contentType === undefined ? undefined : String(contentType),
          body: typeof payload === 'string' ? payload : undefined,
        });
      }
      return payload;
    });
    await hubspot.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = hubspot.app.server.address() as AddressInfo;
    return new HubspotHarness(`http://127.0.0.1:${port}`, ctx, captured, clock, () => hubspot.close());
  }

  /** Moves the emulator's clock (token expiry, lastmodifieddate windows). */
  advanceClock(ms: number): void {
    this.clock.offset += ms;
  }

  client(accessToken: string): Client {
    return new Client({ accessToken, basePath: this.url });
  }

  async control<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  async createPortal(input: Partial<PortalInput> = {}): Promise<CreatedTestPortal> {
    const portalId = input.portalId ?? this.nextPortalId++;
    const clientSecret = input.clientSecret ?? `secret-${portalId}`;
    const { status, body } = await this.control<{
      portalId: number;
      appId: number;
      clientId: string;
      accessToken: string;
      refreshToken: string;
    }>('POST', '/_emulator/hubspot/portals', { appId: 5001, ...input, portalId, clientSecret });
    if (status !== 201) throw new Error(`portal not created: ${status} ${JSON.stringify(body)}`);
    return { ...body, clientSecret, client: this.client(body.accessToken) };
  }

  async seed(
    portalId: number,
    objectType: string,
    count: number,
    properties?: Record<string, string>,
  ): Promise<void> {
    const { status, body } = await this.control(
      'POST',
      `/_emulator/hubspot/portals/${portalId}/seed/${objectType}`,
      {
        count,
        ...(properties ? { properties } : {}),
      },
    );
    if (status !== 201) throw new Error(`seed failed: ${status} ${JSON.stringify(body)}`);
  }

  async addFault(fault: FaultSpec): Promise<void> {
    const { status } = await this.control('POST', '/_emulator/faults', fault);
    if (status !== 201) throw new Error(`fault refused: ${status}`);
  }

  async close(): Promise<void> {
    await this.closeApp();
  }
}

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
