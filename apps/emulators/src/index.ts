export type { EmulatedProvider, EmulatorContext } from './common/context';
export type { EmulatedService, FaultSpec } from './common/faults';
export { requestKeptAlive } from './common/kept-alive';
export type { LoggedRequest } from './common/request-log';
export { emulatorControl } from './control-client';
export { type EmulatorOptions, type RunningEmulators, startEmulators } from './emulators';
export { signInAtGoogle } from './google/testing/consent-browser';
export type { CaughtMail } from './mail/mail-catcher';
export type { MicrosoftUser } from './microsoft/user.store';
