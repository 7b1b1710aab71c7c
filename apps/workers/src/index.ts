export * from './config/workers-config';
export { StartupError } from './infra/connections';
export type { JobContext } from './jobs/job-handler.decorator';
export { JobHandler } from './jobs/job-handler.decorator';
export { JobMapError } from './jobs/job-handler-registry';
export * from './jobs/job-map';
export { JobQueue } from './jobs/job-queue.service';
export * from './workers';
