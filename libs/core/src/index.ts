export * from './config/parse-env';
export * from './crypto/keyring';
export * from './errors';
export * from './ids';
export * from './logger';
export * from './providers';
export * from './result';
export * from './source-change';
