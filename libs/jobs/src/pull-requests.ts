import type { Redis } from 'ioredis';
import { pullJobIds } from './job-map';

/**
 * "A pull was asked for while one was running": the handshake that keeps a notification
 * from being lost to BullMQ's duplicate-id rule. While `pull.<id>` runs, an add of
 * `pull.<id>` is dropped, so a change made after the running job read past it would wait for
 * the next scheduled pull-all. The enqueuer's half (`request`) is the API's and the workers';
 * the rest is the running pull job's (apps/workers/src/pull/pull.service.ts).
 *
 * Keys (times are Redis's own clock, so API and worker hosts need not agree):
 * - `<prefix>:pull-requested:<id>` = when a pull was last asked for (the API, on a
 *   Calendar/Gmail notification, before adding the job).
 * - `<prefix>:pull-round:<id>` = when the current round (reading from caught-up to caught-up,
 *   possibly over several continuation jobs) read its first page. A request older than that
 *   is covered by the round; a newer one may not be.
 * - `<prefix>:pull-closing:<id>` = the id of a job that caught up with no request pending: it
 *   reads no more, so an enqueuer adds the other id (`pull.<id>` ↔ `pull.<id>.next`) rather
 *   than one this finishing job still holds.
 *
 * A caught-up job atomically either takes a request made since its round began (and reads
 * another round) or marks itself closing. Every interleaving of the enqueuer's "request, then
 * look at closing" with that step ends in a read that started after the request.
 */
export class PullRequests {
  /** A request nobody takes (its pull failed for good) is dropped after this; pull-all covers it. */
  static readonly REQUEST_TTL_MS = 10 * 60_000;
  /** Outlives any round's job chain; an expired round only makes a request count (one more round). */
  static readonly ROUND_TTL_MS = 24 * 3_600_000;
  /** Outlives its job by far; a stale mark only makes an enqueuer add the other id. */
  static readonly CLOSING_TTL_MS = 60_000;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** The enqueuer's half: records the request; the job id to add (see REQUEST_SCRIPT). */
  async request(connectionId: string): Promise<string> {
    const closing = await this.redis.eval(
      REQUEST_SCRIPT,
      2,
      pullRequestedKey(this.prefix, connectionId),
      pullClosingKey(this.prefix, connectionId),
      String(PullRequests.REQUEST_TTL_MS),
    );
    const ids = pullJobIds(connectionId);
    return closing === ids.primary ? ids.continuation : ids.primary;
  }

  /** A job starts: a closing mark left by an earlier job under its own id no longer holds. */
  async started(connectionId: string, jobId: string): Promise<void> {
    await this.redis.eval(
      `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
       return 0`,
      1,
      pullClosingKey(this.prefix, connectionId),
      jobId,
    );
  }

  /** Before every page: the first page of a round stamps when the round began. */
  async beforePage(connectionId: string): Promise<void> {
    await this.redis.eval(
      `if redis.call('EXISTS', KEYS[1]) == 0 then
         local t = redis.call('TIME')
         redis.call('SET', KEYS[1], string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000)), 'PX', ARGV[1])
       end
       return 0`,
      1,
      pullRoundKey(this.prefix, connectionId),
      String(PullRequests.ROUND_TTL_MS),
    );
  }

  /**
   * The job caught up; the round is over either way. True: a pull was asked for since the
   * round began: read another round. False: the job is marked closing and must not read again.
   */
  async caughtUp(connectionId: string, jobId: string): Promise<boolean> {
    const again = await this.redis.eval(
      `local requested = redis.call('GET', KEYS[1])
       local round = redis.call('GET', KEYS[2])
       redis.call('DEL', KEYS[1], KEYS[2])
       if requested and (not round or tonumber(requested) >= tonumber(round)) then return 1 end
       redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
       return 0`,
      3,
      pullRequestedKey(this.prefix, connectionId),
      pullRoundKey(this.prefix, connectionId),
      pullClosingKey(this.prefix, connectionId),
      jobId,
      String(PullRequests.CLOSING_TTL_MS),
    );
    return again === 1;
  }
}

/** Records a request at Redis's time; answers the id of a job that finished reading, if any. */
const REQUEST_SCRIPT = `local t = redis.call('TIME')
redis.call('SET', KEYS[1], string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000)), 'PX', ARGV[1])
return redis.call('GET', KEYS[2])`;

export const pullRequestedKey = (prefix: string, connectionId: string): string =>
  `${prefix}:pull-requested:${connectionId}`;
export const pullRoundKey = (prefix: string, connectionId: string): string =>
  `${prefix}:pull-round:${connectionId}`;
export const pullClosingKey = (prefix: string, connectionId: string): string =>
  `${prefix}:pull-closing:${connectionId}`;
