import { z } from 'zod';

/**
 * The one map of queues and jobs (STYLE habit 5), shared by the workers, which run the jobs,
 * and the API, which adds some of them. A queue is a unit of scaling and retry policy; a job
 * name is unique across all queues, so a handler is found by name alone. Payloads carry ids,
 * never tokens or record bodies.
 *
 * To add a job: add its queue to QUEUES if new, add an entry to JOBS, and mark one workers'
 * provider method `@JobHandler('<name>')`. The workers refuse to start until exactly one
 * handler exists for every job.
 */

export interface QueueDefinition {
  /** Parallel jobs per process; omitted means WORKER_CONCURRENCY. */
  readonly concurrency?: number;
  /** Attempts before a job is dead-lettered, counting the first. */
  readonly attempts: number;
  /** Delay before the first retry; it doubles on every further retry. */
  readonly backoffMs: number;
}

export interface JobDefinition<Q extends string = string, S extends z.ZodType = z.ZodType> {
  readonly queue: Q;
  readonly schema: S;
  /**
   * A deterministic id for one unit of work, so enqueueing it twice while it is pending is
   * a no-op. BullMQ forbids ':' in custom ids; use '.' or '-'. Omitted: BullMQ assigns one.
   * (Method syntax on purpose: a map entry's typed payload must still fit `JobMap`.)
   */
  jobId?(payload: z.output<S>): string;
  /** Overrides the queue's attempts for this job. */
  readonly attempts?: number;
}

export interface JobMap {
  readonly queues: Readonly<Record<string, QueueDefinition>>;
  readonly jobs: Readonly<Record<string, JobDefinition>>;
}

/**
 * A connection's pull job id, and the one a job hands over to when it runs out of budget
 * (`pull.<id>` ↔ `pull.<id>.next`; see PullRequests for why a second id exists).
 */
export const pullJobIds = (connectionId: string) =>
  ({ primary: `pull.${connectionId}`, continuation: `pull.${connectionId}.next` }) as const;

/** A replay's job id is the replay row's: the API's enqueue and a retry are one job. */
export const replayJobId = (replayId: string): string => `replay.${replayId}`;

/** One dry run per connection and point of its backfill (the last staged change's id, finished or not). */
export const dryRunJobId = (
  connectionId: string,
  at: { readonly stagedUpTo: string; readonly complete: boolean },
): string => `dry-run.${connectionId}.${at.stagedUpTo}.${at.complete ? 'complete' : 'partial'}`;

/** Items in each list of a stored dry-run report; a request may ask for fewer, never more. */
export const DRY_RUN_REPORT_LIMIT = 1_000;

/** Keeps the literal queue name and schema type of one entry. */
const job = <Q extends QueueName, S extends z.ZodType>(definition: JobDefinition<Q, S>) => definition;

export const QUEUES = {
  // Housekeeping: rare, cheap jobs whose retry can wait.
  maintenance: { attempts: 3, backoffMs: 30_000 },
  // Reading a connection (backfill or incremental): one job per connection at a time.
  pull: { attempts: 6, backoffMs: 2_000 },
  // Writing to a connection: one job drains the connection's outbox, coalesced and batched.
  push: { attempts: 8, backoffMs: 1_000 },
  // Rebuilding a workspace's derived state from the log: long, rare, one at a time per process.
  replay: { concurrency: 1, attempts: 3, backoffMs: 5_000 },
  // A connection's dry-run report: the whole sync stage over its backfill, one at a time per process.
  'dry-run': { concurrency: 1, attempts: 3, backoffMs: 2_000 },
} as const satisfies Record<string, QueueDefinition>;

export const JOBS = {
  /** Deletes change events older than LOG_RETENTION_HOURS that every consumer group is past. */
  'log.retention': job({
    queue: 'maintenance',
    schema: z.strictObject({}),
    // One retention run waiting is enough; a second enqueue joins it.
    jobId: () => 'log.retention',
  }),

  /**
   * Reads one connection: its backfill while `backfilling`, otherwise changes since its
   * cursor, page after page until caught up, appending each page to the log before its
   * cursor is stored. One pending pull per connection; a second enqueue joins it.
   */
  'connection.pull': job({
    queue: 'pull',
    schema: z.strictObject({ connectionId: z.uuid(), reason: z.string().max(200).optional() }),
    jobId: (p) => pullJobIds(p.connectionId).primary,
  }),

  /** Enqueues a pull of every live or backfilling connection (the fallback to push notifications). */
  'connection.pull-all': job({
    queue: 'maintenance',
    schema: z.strictObject({}),
    jobId: () => 'connection.pull-all',
  }),

  /** Registers or renews push notifications (Calendar and Gmail watches) before they expire. */
  'connection.renew': job({
    queue: 'maintenance',
    schema: z.strictObject({}),
    jobId: () => 'connection.renew',
  }),

  /**
   * Sends a connection's pending outbox rows, coalesced per target record and batched. The
   * slot is the coalescing window the rows fell into, so rows written while a push runs
   * start the next slot's job instead of being dropped as a duplicate of the running one.
   */
  'connection.push': job({
    queue: 'push',
    schema: z.strictObject({ connectionId: z.uuid(), slot: z.number().int().nonnegative() }),
    jobId: (p) => `push.${p.connectionId}.${p.slot}`,
  }),

  /**
   * Runs a replay of a workspace (POST /api/v1/replays): its id is the replay row's, so the
   * API's enqueue and a retry are one job; the row's status makes a retry of an applied
   * replay a no-op (an apply marks itself succeeded in its own transaction).
   */
  'workspace.replay': job({
    queue: 'replay',
    schema: z.strictObject({ replayId: z.uuid() }),
    jobId: (p) => replayJobId(p.replayId),
  }),

  /**
   * Computes a connection's dry-run report (GET /api/v1/connections/:id/dry-run) and stores
   * it in dry_run_report. `stagedUpTo` (the last staged change) and `complete` (the backfill
   * finished) are the point of the backfill the API saw: requests at one point are one job, a
   * request once the backfill moved on is another.
   */
  'connection.dry-run': job({
    queue: 'dry-run',
    schema: z.strictObject({
      connectionId: z.uuid(),
      stagedUpTo: z.string().regex(/^\d{1,19}$/),
      complete: z.boolean(),
    }),
    jobId: (p) => dryRunJobId(p.connectionId, p),
  }),

  /**
   * Samples every provider connection's health into the history and deletes samples past
   * HEALTH_HISTORY_RETENTION_HOURS. Scheduled every HEALTH_SAMPLE_INTERVAL_MS; a sample is
   * keyed by its interval, so a late or repeated run of one interval writes nothing more.
   */
  'health.sample': job({
    queue: 'maintenance',
    schema: z.strictObject({}),
    jobId: () => 'health.sample',
  }),

  /** Re-enqueues pushes for outbox rows left pending or claimed by a process that died. */
  'outbox.sweep': job({
    queue: 'maintenance',
    schema: z.strictObject({}),
    jobId: () => 'outbox.sweep',
  }),
};

/** The production map; tests may boot with an extended one. */
export const JOB_MAP: JobMap = { queues: QUEUES, jobs: JOBS };

export type QueueName = keyof typeof QUEUES;
export type JobName = keyof typeof JOBS;
/** What a producer passes to enqueue a job. */
export type JobPayload<N extends JobName> = z.input<(typeof JOBS)[N]['schema']>;
/** What the handler receives after parsing. */
export type JobData<N extends JobName> = z.output<(typeof JOBS)[N]['schema']>;
export type QueueOf<N extends JobName> = (typeof JOBS)[N]['queue'];
