import type { AddressInfo } from 'node:net';
import type { EmulatedProvider, EmulatorContext } from './common/context';
import { registerControlRoutes } from './common/control.routes';
import { FaultRegistry } from './common/faults';
import { RequestLog } from './common/request-log';
import { createGoogleEmulator } from './google/google.emulator';
import { createHubspotEmulator } from './hubspot/hubspot.emulator';

export interface EmulatorOptions {
  host?: string;
  /** 0 picks a free port (tests). */
  hubspotPort?: number;
  googlePort?: number;
  seed?: number;
}

export interface RunningEmulators {
  hubspotUrl: string;
  googleUrl: string;
  context: EmulatorContext;
  hubspot: EmulatedProvider;
  google: EmulatedProvider;
  close(): Promise<void>;
}

/** Starts HubSpot and Google on their ports, each with the shared control routes. */
export async function startEmulators(options: EmulatorOptions = {}): Promise<RunningEmulators> {
  const host = options.host ?? '127.0.0.1';
  const context: EmulatorContext = {
    faults: new FaultRegistry(),
    requests: new RequestLog(),
    seed: options.seed ?? 1,
    now: () => Date.now(),
  };
  const hubspot = createHubspotEmulator(context);
  const google = createGoogleEmulator(context);
  const resetAll = () => {
    context.faults.clear();
    context.requests.clear();
    hubspot.reset();
    google.reset();
  };
  registerControlRoutes(hubspot.app, context, resetAll);
  registerControlRoutes(google.app, context, resetAll);
  await hubspot.app.listen({ host, port: options.hubspotPort ?? 4010 });
  await google.app.listen({ host, port: options.googlePort ?? 4020 });
  const url = (p: EmulatedProvider) => `http://${host}:${(p.app.server.address() as AddressInfo).port}`;
  return {
    hubspotUrl: url(hubspot),
    googleUrl: url(google),
    context,
    hubspot,
    google,
    close: async () => {
      await Promise.all([hubspot.close(), google.close()]);
    },
  };
}
