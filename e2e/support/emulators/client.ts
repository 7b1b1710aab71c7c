// One client over every emulator (apps/emulators/README.md): each provider's control
// routes, and the shared reset, faults and request log, which the HubSpot port serves.

import { call, type EmulatedService, type FaultSpec, isWrite, type LoggedRequest } from './control';
import { googleControl } from './google-client';
import { hubspotControl } from './hubspot-client';
import { microsoftControl } from './microsoft-client';

export interface EmulatorUrls {
  hubspot: string;
  google: string;
  /**
   * Microsoft 365 (Graph and the identity platform), `https://localhost:PORT`. A process that
   * calls it trusts its authority through NODE_EXTRA_CA_CERTS (`microsoftCa`).
   */
  microsoft?: string;
  /** The PEM file of the authority the Microsoft emulator's certificate is signed by. */
  microsoftCa?: string;
  /** The mail catch-all (`smtp://host:port`), where the API sends sign-in links. */
  smtp?: string;
}

/** Control-API helpers for every emulator. */
export function emulatorClient(urls: EmulatorUrls) {
  const hubspot = hubspotControl(urls.hubspot);
  const google = googleControl(urls.google);

  const requests = async (filter: { service?: EmulatedService; account?: string | number } = {}) => {
    const q = new URLSearchParams();
    if (filter.service) q.set('service', filter.service);
    if (filter.account !== undefined) q.set('account', String(filter.account));
    const query = q.toString();
    return call<LoggedRequest[]>(urls.hubspot, 'GET', `/_emulator/requests${query ? `?${query}` : ''}`);
  };

  return {
    urls,
    hubspot,
    google,
    /** Present when the emulators' Microsoft 365 URL is known. */
    microsoft: urls.microsoft ? microsoftControl(urls.microsoft) : undefined,
    /** Forget every account, record, fault and logged request, on every service. */
    reset: () => call<void>(urls.hubspot, 'POST', '/_emulator/reset'),
    fault: (spec: FaultSpec) => call<FaultSpec>(urls.hubspot, 'POST', '/_emulator/faults', spec),
    clearFaults: () => call<void>(urls.hubspot, 'DELETE', '/_emulator/faults'),
    requests,
    /** Data-plane writes (see isWrite), optionally for one account. */
    writes: async (filter: { service?: EmulatedService; account?: string | number } = {}) =>
      (await requests(filter)).filter(isWrite),
    /** How many data-plane writes each provider received (optionally for one account). */
    writeCounts: async (filter: { account?: string | number } = {}) => {
      const writes = (await requests(filter)).filter(isWrite);
      return {
        hubspot: writes.filter((w) => w.service === 'hubspot').length,
        google: writes.filter((w) => w.service === 'google').length,
        microsoft: writes.filter((w) => w.service === 'microsoft').length,
      };
    },
  };
}

export type EmulatorClient = ReturnType<typeof emulatorClient>;
