import { isUnifiedField } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../contract/content-hash';
import {
  listIdFromSelfLink,
  markerFor,
  splitExternalId,
  stripMarker,
  toGoogleTask,
  toTaskChange,
  toTaskFields,
  withMarker,
} from './google-task.mapper';

// tasks.list items as the Tasks API answers them.
const recorded = {
  kind: 'tasks#task',
  id: 'dGFzazEyMzQ',
  etag: '"LTEyMzQ1Njc4OQ"',
  title: 'Send the proposal',
  updated: '2030-01-05T10:11:12.345Z',
  selfLink: 'https://www.googleapis.com/tasks/v1/lists/TElTVDE/tasks/dGFzazEyMzQ',
  position: '00000000000000000001',
  notes: 'Ask about budget\n\n[syncline:0123456789abcdef01234567]',
  status: 'completed',
  due: '2030-01-09T00:00:00.000Z',
  completed: '2030-01-05T10:11:12.345Z',
  hidden: true,
  links: [],
};
const deleted = { ...recorded, deleted: true, updated: '2030-01-06T00:00:00.000Z' };
const scope = {
  workspaceId: '11111111-1111-4111-8111-111111111111',
  connectionId: '22222222-2222-4222-8222-222222222222',
};

describe('google task mapper', () => {
  it('maps a task, stripping our marker from the notes and keeping it as origin', () => {
    const change = toTaskChange(recorded, 'TElTVDE', scope, new Date());
    expect(change).toMatchObject({
      entityType: 'task',
      op: 'upsert',
      externalId: 'TElTVDE/dGFzazEyMzQ',
      eventKey: 'dGFzazEyMzQ:2030-01-05T10:11:12.345Z',
      providerVersion: recorded.etag,
      origin: { synclineMarker: '0123456789abcdef01234567' },
      fields: {
        title: 'Send the proposal',
        notes: 'Ask about budget',
        status: 'completed',
        dueAt: recorded.due,
        completedAt: recorded.completed,
        listId: 'TElTVDE',
        parentId: null,
      },
    });
  });

  it('maps a deleted task to a tombstone with its own key', () => {
    const change = toTaskChange(deleted, 'TElTVDE', scope, new Date());
    expect(change).toMatchObject({
      op: 'delete',
      fields: {},
      eventKey: 'dGFzazEyMzQ:2030-01-06T00:00:00.000Z:deleted',
    });
  });

  it('goes back to a task body and round-trips the fields', () => {
    const fields = toTaskFields(recorded, 'TElTVDE');
    const body = toGoogleTask({ ...fields });
    expect(body).toEqual({
      title: 'Send the proposal',
      notes: 'Ask about budget',
      status: 'completed',
      due: recorded.due,
    });
    const back = toTaskFields({ ...body, completed: recorded.completed }, 'TElTVDE');
    expect(contentHash({ ...back })).toBe(contentHash({ ...fields }));
    expect(toGoogleTask({ status: 'open', notes: null })).toEqual({ status: 'needsAction', notes: null });
  });

  it('marks, finds and strips idempotency markers; splits external ids', () => {
    const marker = markerFor('k1');
    expect(marker).toBe(markerFor('k1'));
    expect(stripMarker(withMarker('hello', marker))).toBe('hello');
    expect(stripMarker(withMarker(null, marker))).toBeNull();
    expect(splitExternalId('L1/T1')).toEqual({ listId: 'L1', taskId: 'T1' });
    expect(splitExternalId('nope')).toBeUndefined();
    expect(listIdFromSelfLink(recorded.selfLink)).toBe('TElTVDE');
  });

  it('uses only unified task field names, with times as ISO UTC strings with milliseconds', () => {
    const fields = toTaskFields({ ...recorded, due: '2030-01-09T00:00:00Z', completed: null }, 'L');
    for (const field of Object.keys(fields)) expect(isUnifiedField('task', field), field).toBe(true);
    expect(fields).toMatchObject({ dueAt: '2030-01-09T00:00:00.000Z', completedAt: null });
    expect(contentHash({ ...toTaskFields({ ...toGoogleTask({ ...fields }) }, 'L') })).toBe(
      contentHash({ ...fields }),
    );
  });
});
