// What other workspaces (e2e scenarios) may start the API with.
export { createApp } from './app.factory';
export type { AppOptions } from './app.module';
export { type AppConfig, appConfigSchema, loadAppConfig } from './config/app-config';
