import type { AddressInfo } from 'node:net';
import { Mulberry32 } from '@syncline/core';
import type { EmulatedProvider, EmulatorContext } from './common/context';
import { registerControlRoutes } from './common/control.routes';
import { FaultRegistry } from './common/faults';
import { RequestLog } from './common/request-log';
import { createGoogleEmulator } from './google/google.emulator';
import { createHubspotEmulator } from './hubspot/hubspot.emulator';
import { MailCatcher } from './mail/mail-catcher';
import { registerMailControlRoutes } from './mail/mail-control.routes';
import { createMicrosoftEmulator } from './microsoft/microsoft.emulator';
import { emulatorCaFile } from './microsoft/tls';

export interface EmulatorOptions {
  host?: string;
  /** 0 picks a free port (tests). */
  hubspotPort?: number;
  googlePort?: number;
  /** Microsoft 365 (Graph and the identity platform), over HTTPS; default 4030. */
  microsoftPort?: number;
  /**
   * The mail catch-all's SMTP port: 4025 by default, but a free port when both HTTP ports are
   * free ports (tests side by side must not share one mailbox port).
   */
  smtpPort?: number;
  seed?: number;
}

export interface RunningEmulators {
  hubspotUrl: string;
  googleUrl: string;
  /** `https://localhost:port`: its certificate's authority is `caFile` (NODE_EXTRA_CA_CERTS). */
  microsoftUrl: string;
  /** The authority the Microsoft emulator's certificate is signed by (PEM). */
  caFile: string;
  /** The mail catch-all, `smtp://host:port`: no authentication, no TLS, any address. */
  smtpUrl: string;
  context: EmulatorContext;
  hubspot: EmulatedProvider;
  google: EmulatedProvider;
  microsoft: EmulatedProvider;
  close(): Promise<void>;
}

/**
 * Starts HubSpot, Google and Microsoft 365 on their ports, each with the shared control
 * routes, and the mail catch-all (read through any port's control routes).
 */
export async function startEmulators(options: EmulatorOptions = {}): Promise<RunningEmulators> {
  const host = options.host ?? '127.0.0.1';
  const seed = options.seed ?? 1;
  // Faults at a rate draw from a generator of the seed's own, so a run hits the same calls.
  const faultDraws = new Mulberry32(seed * 0x9e3779b1);
  const context: EmulatorContext = {
    faults: new FaultRegistry(() => faultDraws.next()),
    requests: new RequestLog(),
    seed,
    now: () => Date.now(),
  };
  const hubspot = createHubspotEmulator(context);
  const google = createGoogleEmulator(context);
  const microsoft = await createMicrosoftEmulator(context);
  const mail = new MailCatcher();
  const resetAll = () => {
    context.faults.clear();
    context.requests.clear();
    hubspot.reset();
    google.reset();
    microsoft.reset();
    mail.clear();
  };
  for (const { app } of [hubspot, google, microsoft]) {
    registerControlRoutes(app, context, resetAll);
    registerMailControlRoutes(app, mail);
  }
  await hubspot.app.listen({ host, port: options.hubspotPort ?? 4010 });
  await google.app.listen({ host, port: options.googlePort ?? 4020 });
  const freePorts = options.hubspotPort === 0 && options.googlePort === 0;
  await microsoft.app.listen({ host, port: options.microsoftPort ?? (freePorts ? 0 : 4030) });
  const smtpUrl = await mail.listen(host, options.smtpPort ?? (freePorts ? 0 : 4025)).catch(async (error) => {
    await Promise.all([hubspot.close(), google.close(), microsoft.close()]);
    throw error;
  });
  const url = (p: EmulatedProvider) => `http://${host}:${(p.app.server.address() as AddressInfo).port}`;
  return {
    hubspotUrl: url(hubspot),
    googleUrl: url(google),
    // By name, not address: the certificate is for localhost (and the SDK's customHosts take names).
    microsoftUrl: `https://localhost:${(microsoft.app.server.address() as AddressInfo).port}`,
    caFile: emulatorCaFile(),
    smtpUrl,
    context,
    hubspot,
    google,
    microsoft,
    close: async () => {
      await Promise.all([hubspot.close(), google.close(), microsoft.close(), mail.close()]);
    },
  };
}
