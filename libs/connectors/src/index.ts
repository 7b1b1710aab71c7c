export * from './contract/connector';
export * from './contract/content-hash';
