// A small typed client for the emulators' control API (apps/emulators/README.md,
// docs/hubspot.md, docs/google.md, docs/microsoft.md). Plain fetch, no vitest: the e2e
// harness, scripts/demo-world.ts and scripts/demo-world-outlook.ts use it.
// The code lives in emulators/, one module per provider; this module keeps the public names
// in one place for the tests, scripts/ and bench/.

export { type EmulatorClient, type EmulatorUrls, emulatorClient } from './emulators/client';
export {
  type EmulatedService,
  EmulatorError,
  type FaultKind,
  type FaultSpec,
  isWrite,
  type LoggedRequest,
} from './emulators/control';
export type {
  CalendarEvent,
  CalendarEventInput,
  GmailMessage,
  GoogleTask,
  GoogleUserGrant,
  MailInput,
  TaskInput,
} from './emulators/google-client';
export {
  type CreatePortalInput,
  grantCredentials,
  type HubspotLimits,
  type HubspotObjectType,
  type HubspotOwner,
  type HubspotPortalGrant,
  type HubspotRecord,
  type HubspotWebhookTiming,
  type PropertyValues,
  type WebhookDelivery,
} from './emulators/hubspot-client';
export type { MicrosoftControl } from './emulators/microsoft-client';
// Every Microsoft shape is public.
export type * from './emulators/microsoft-types';
