import { AsyncLocalStorage } from 'node:async_hooks';

/** Ids of the job being run; the root logger's mixin adds them to every line logged inside it. */
export interface JobLogFields {
  queue: string;
  job: string;
  jobId: string;
  attempt: number;
  workspaceId?: string;
  connectionId?: string;
}

export const jobLogContext = new AsyncLocalStorage<JobLogFields>();

/** For pino's `mixin` option. A copy: pino merges each line's own fields into what the mixin returns. */
export const jobLogMixin = (): object => ({ ...jobLogContext.getStore() });
