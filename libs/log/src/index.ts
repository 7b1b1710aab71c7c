export * from './change-log';
export * from './consumer-group';
export * from './derived-tables';
export * from './generic-plans';
export * from './group-admin';
export * from './log-event';
export * from './partitioner';
export * from './staging-change-log';
export type { AppendValidationError } from './validate-changes';
