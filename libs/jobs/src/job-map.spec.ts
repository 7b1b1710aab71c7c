import { describe, expect, it } from 'vitest';
import { DRY_RUN_REPORT_LIMIT, dryRunJobId, JOB_MAP, JOBS, pullJobIds, QUEUES, replayJobId } from './job-map';
import { attemptsOf, jobOptions } from './job-options';
import { pullClosingKey, pullRequestedKey, pullRoundKey } from './pull-requests';

const id = '0190a000-0000-7000-8000-000000000001';

describe('the job map both apps use', () => {
  it('gives the ids Redis already holds jobs under (a rename would let a duplicate through)', () => {
    expect(pullJobIds(id)).toEqual({ primary: `pull.${id}`, continuation: `pull.${id}.next` });
    expect(JOBS['connection.pull'].jobId?.({ connectionId: id })).toBe(`pull.${id}`);
    expect(replayJobId(id)).toBe(`replay.${id}`);
    expect(JOBS['workspace.replay'].jobId?.({ replayId: id })).toBe(`replay.${id}`);
    expect(dryRunJobId(id, { stagedUpTo: '42', complete: false })).toBe(`dry-run.${id}.42.partial`);
    expect(JOBS['connection.dry-run'].jobId?.({ connectionId: id, stagedUpTo: '42', complete: true })).toBe(
      `dry-run.${id}.42.complete`,
    );
    // BullMQ refuses ':' in custom ids.
    for (const jobId of [
      pullJobIds(id).continuation,
      replayJobId(id),
      dryRunJobId(id, { stagedUpTo: '1', complete: true }),
    ])
      expect(jobId).not.toContain(':');
  });

  it('adds a job with its queue’s retry settings, whoever adds it', () => {
    expect(jobOptions(JOB_MAP, 'connection.pull', { connectionId: id })).toEqual({
      attempts: 6,
      backoff: { type: 'exponential', delay: 2_000 },
      removeOnComplete: true,
      removeOnFail: false,
      jobId: `pull.${id}`,
    });
    expect(jobOptions(JOB_MAP, 'workspace.replay', { replayId: id })).toMatchObject({
      attempts: 3,
      backoff: { type: 'exponential', delay: 5_000 },
    });
    expect(attemptsOf(JOB_MAP, 'connection.dry-run')).toBe(QUEUES['dry-run'].attempts);
    expect(() => jobOptions(JOB_MAP, 'no.such-job', {})).toThrow(/not in the job map/);
  });

  it('checks payloads: a dry run names a point of the backfill', () => {
    const schema = JOBS['connection.dry-run'].schema;
    expect(schema.safeParse({ connectionId: id, stagedUpTo: '0', complete: false }).success).toBe(true);
    expect(schema.safeParse({ connectionId: id, stagedUpTo: '-1', complete: false }).success).toBe(false);
    expect(schema.safeParse({ connectionId: id, stagedUpTo: '1' }).success).toBe(false);
    expect(DRY_RUN_REPORT_LIMIT).toBe(1_000);
  });

  it("names the pull handshake's keys under the Redis prefix", () => {
    expect([pullRequestedKey('p', id), pullRoundKey('p', id), pullClosingKey('p', id)]).toEqual([
      `p:pull-requested:${id}`,
      `p:pull-round:${id}`,
      `p:pull-closing:${id}`,
    ]);
  });
});
