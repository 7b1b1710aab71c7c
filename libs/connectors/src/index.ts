export * from './contract/connector';
export * from './contract/content-hash';
export * from './gmail';
export * from './google-calendar';
export * from './google-tasks';
export * from './hubspot';
export * from './microsoft-common';
export * from './shared';
