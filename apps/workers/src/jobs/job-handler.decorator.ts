import { SetMetadata } from '@nestjs/common';
import type { JobData, JobName } from './job-map';

export const JOB_HANDLER_METADATA = 'syncline:job-handler';

/** What a handler learns about the job beside its payload. */
export interface JobContext {
  readonly queue: string;
  readonly jobName: string;
  readonly jobId: string;
  /** 1 on the first attempt. */
  readonly attempt: number;
}

/** A handler of a job in the production map gets that job's parsed payload. */
export type JobHandlerFn<N extends string> = (
  payload: N extends JobName ? JobData<N> : unknown,
  context: JobContext,
) => Promise<unknown>;

/**
 * Marks a provider method as the one handler of a job. The method's payload type is checked
 * against the job map at compile time; that exactly one handler exists is checked at boot.
 */
export function JobHandler<N extends string>(jobName: N) {
  return <F extends JobHandlerFn<N>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<F>,
  ): void => {
    SetMetadata(JOB_HANDLER_METADATA, jobName)(target, key, descriptor);
  };
}
