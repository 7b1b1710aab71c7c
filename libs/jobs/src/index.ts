export * from './job-client';
export * from './job-map';
export * from './job-options';
export * from './pull-requests';
