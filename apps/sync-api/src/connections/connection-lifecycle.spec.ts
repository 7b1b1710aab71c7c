import { describe, expect, it } from 'vitest';
import { type LifecycleSubject, planLifecycle } from './connection-lifecycle';
import { CONNECTION_STATUSES } from './connections.schemas';

const subject = (
  status: LifecycleSubject['status'],
  more: Partial<LifecycleSubject> = {},
): LifecycleSubject => ({
  status,
  cursors: 'live',
  hasCredentials: true,
  ...more,
});

describe('planLifecycle', () => {
  it('refuses every action on a disconnected connection', () => {
    for (const action of ['pause', 'resume', 'resync'] as const)
      expect(planLifecycle(action, subject('disconnected'))).toEqual({
        kind: 'refused',
        code: 'connection_disconnected',
      });
  });

  it('pauses any other status, and leaves a paused one as it is', () => {
    for (const status of CONNECTION_STATUSES.filter((s) => s !== 'disconnected' && s !== 'paused'))
      expect(planLifecycle('pause', subject(status)), status).toEqual({ kind: 'pause' });
    expect(planLifecycle('pause', subject('paused'))).toEqual({ kind: 'unchanged' });
  });

  it('resumes a paused or errored connection where its cursors say it stopped', () => {
    for (const status of ['paused', 'error'] as const) {
      expect(planLifecycle('resume', subject(status, { cursors: 'live' }))).toEqual({
        kind: 'resume',
        status: 'live',
      });
      expect(planLifecycle('resume', subject(status, { cursors: 'backfill' }))).toEqual({
        kind: 'resume',
        status: 'backfilling',
      });
      expect(planLifecycle('resume', subject(status, { cursors: 'none' }))).toEqual({
        kind: 'resume',
        status: 'pending',
      });
    }
    for (const status of ['pending', 'backfilling', 'live'] as const)
      expect(planLifecycle('resume', subject(status)), status).toEqual({ kind: 'unchanged' });
  });

  it('a connection without working credentials is neither resumed nor resynced', () => {
    for (const action of ['resume', 'resync'] as const) {
      expect(planLifecycle(action, subject('needs_reauth'))).toEqual({
        kind: 'refused',
        code: 'credentials_required',
      });
      expect(planLifecycle(action, subject('live', { hasCredentials: false }))).toEqual({
        kind: 'refused',
        code: 'credentials_required',
      });
    }
  });

  it('resyncs a running or errored connection, but not a paused one', () => {
    for (const status of ['pending', 'backfilling', 'live', 'error'] as const)
      expect(planLifecycle('resync', subject(status)), status).toEqual({ kind: 'resync' });
    expect(planLifecycle('resync', subject('paused'))).toEqual({
      kind: 'refused',
      code: 'connection_paused',
    });
  });
});
