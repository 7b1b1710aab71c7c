export type { EmulatedProvider, EmulatorContext } from './common/context';
export type { FaultSpec } from './common/faults';
export { emulatorControl } from './control-client';
export { type EmulatorOptions, type RunningEmulators, startEmulators } from './emulators';
export { signInAtGoogle } from './google/testing/consent-browser';
export type { CaughtMail } from './mail/mail-catcher';
