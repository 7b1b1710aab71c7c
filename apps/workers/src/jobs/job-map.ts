// The job map is @syncline/jobs', shared with the API; this module adds the workers' token for it.
export * from '@syncline/jobs';

/** Injection token for the JobMap the process runs with. */
export const JOB_MAP_TOKEN = Symbol('JOB_MAP');
