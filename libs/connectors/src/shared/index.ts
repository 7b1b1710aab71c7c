export * from './constant-time';
export * from './http-errors';
export * from './oauth-refresh';
export * from './pg-credential-store';
export * from './provider-call';
export * from './rate-budget';
export * from './record-url';
export * from './token-source';
