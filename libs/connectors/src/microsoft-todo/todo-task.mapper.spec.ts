import { isUnifiedField, UNIFIED_FIELDS } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../contract/content-hash';
import {
  ORIGIN_EXTENSION,
  originExtension,
  originOf,
  splitExternalId,
  type TodoTask,
  taskEventKey,
  toTaskChange,
  toTaskFields,
  toTodoDate,
  toTodoTask,
  toUnifiedDate,
} from './todo-task.mapper';

const LIST = 'AAMkADdGFza2xpc3Qtb25lLWlkLWZvci10aGUtbWFwcGVyLXNwZWMtMDAwMDAwMA';

// A todoTask as Graph's delta answers it (seven fractional digits, dates as dateTimeTimeZone).
const recorded: TodoTask = {
  '@odata.etag': 'W/"vVwdQvxCiE6779iYhchMrAAGgwrltg=="',
  importance: 'high',
  isReminderOn: false,
  status: 'completed',
  title: 'Send the proposal',
  createdDateTime: '2030-01-04T08:00:00.0000000Z',
  lastModifiedDateTime: '2030-01-05T10:11:12.3450000Z',
  hasAttachments: false,
  categories: [],
  id: 'AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0AdGFzay1pZC1mb3ItdGhlLW1hcHBlci1zcGVj',
  body: { content: 'Ask about budget', contentType: 'text' },
  bodyLastModifiedDateTime: '2030-01-04T08:00:00.0000000Z',
  completedDateTime: { dateTime: '2030-01-05T00:00:00.0000000', timeZone: 'UTC' },
  dueDateTime: { dateTime: '2030-01-09T00:00:00.0000000', timeZone: 'UTC' },
} as TodoTask;
const removed: TodoTask = { id: recorded.id, '@removed': { reason: 'deleted' } };
const scope = {
  workspaceId: '11111111-1111-4111-8111-111111111111',
  connectionId: '22222222-2222-4222-8222-222222222222',
};

describe('microsoft to do task mapper', () => {
  it('maps a task to the unified fields Google Tasks reports, with its etag as version and key', () => {
    const change = toTaskChange(recorded, LIST, scope, new Date('2031-01-01T00:00:00Z'));
    expect(change).toEqual({
      ...scope,
      entityType: 'task',
      op: 'upsert',
      externalId: `${LIST}/${recorded.id}`,
      eventKey: `${recorded.id}:${recorded['@odata.etag']}`,
      eventTime: new Date('2030-01-05T10:11:12.345Z'),
      providerVersion: recorded['@odata.etag'],
      fields: {
        title: 'Send the proposal',
        notes: 'Ask about budget',
        status: 'completed',
        dueAt: '2030-01-09T00:00:00.000Z',
        completedAt: '2030-01-05T00:00:00.000Z',
        listId: LIST,
        parentId: null,
      },
      fieldTimes: Object.fromEntries(
        ['title', 'notes', 'status', 'dueAt', 'completedAt', 'listId', 'parentId'].map((k) => [
          k,
          new Date('2030-01-05T10:11:12.345Z'),
        ]),
      ),
    });
    for (const field of Object.keys(change.fields ?? {})) expect(isUnifiedField('task', field)).toBe(true);
    expect(Object.keys(change.fields ?? {}).sort()).toEqual(
      ['completedAt', 'dueAt', 'listId', 'notes', 'parentId', 'status', 'title'].sort(),
    );
    expect(Object.keys(UNIFIED_FIELDS.task)).toEqual(
      expect.arrayContaining(Object.keys(change.fields ?? {})),
    );
  });

  it('maps every open status to open, and an empty title and body to null', () => {
    for (const status of ['notStarted', 'inProgress', 'waitingOnOthers', 'deferred']) {
      expect(toTaskFields({ ...recorded, status }, LIST).status).toBe('open');
    }
    const bare = toTaskFields(
      { id: 'x', title: '', body: { content: '', contentType: 'text' }, status: 'notStarted' },
      LIST,
    );
    expect(bare).toEqual({
      title: null,
      notes: null,
      status: 'open',
      dueAt: null,
      completedAt: null,
      listId: LIST,
      parentId: null,
    });
  });

  it('maps @removed to a tombstone whose key is stable, and versions to distinct keys', () => {
    const received = new Date('2031-02-03T04:05:06Z');
    expect(toTaskChange(removed, LIST, scope, received)).toEqual({
      ...scope,
      entityType: 'task',
      op: 'delete',
      externalId: `${LIST}/${recorded.id}`,
      eventKey: `${recorded.id}:removed`,
      eventTime: received,
      fields: {},
    });
    const edited = { ...recorded, '@odata.etag': 'W/"another"' };
    expect(taskEventKey(edited)).not.toBe(taskEventKey(recorded));
    expect(taskEventKey({ ...recorded })).toBe(taskEventKey(recorded));
  });

  it('keeps To Do dates to the date, whichever zone set them', () => {
    // Midnight UTC, as Graph shows a date set in UTC.
    expect(toUnifiedDate({ dateTime: '2030-03-01T00:00:00.0000000', timeZone: 'UTC' })).toBe(
      '2030-03-01T00:00:00.000Z',
    );
    // Midnight in Berlin (UTC+1) and Tokyo (UTC+9), shown in UTC the afternoon before.
    expect(toUnifiedDate({ dateTime: '2030-02-28T23:00:00.0000000', timeZone: 'UTC' })).toBe(
      '2030-03-01T00:00:00.000Z',
    );
    expect(toUnifiedDate({ dateTime: '2030-02-28T15:00:00.0000000', timeZone: 'UTC' })).toBe(
      '2030-03-01T00:00:00.000Z',
    );
    // Midnight in New York (UTC-5), shown in UTC that morning.
    expect(toUnifiedDate({ dateTime: '2030-03-01T05:00:00.0000000', timeZone: 'UTC' })).toBe(
      '2030-03-01T00:00:00.000Z',
    );
    // A date shown in its own zone is that zone's date.
    expect(
      toUnifiedDate({ dateTime: '2030-03-01T00:00:00.0000000', timeZone: 'Pacific Standard Time' }),
    ).toBe('2030-03-01T00:00:00.000Z');
    expect(toUnifiedDate(null)).toBeNull();
    expect(toUnifiedDate({ dateTime: 'soon', timeZone: 'UTC' })).toBe('soon');
    expect(toTodoDate('2030-03-01T18:30:00.000Z')).toEqual({
      dateTime: '2030-03-01T00:00:00.0000000',
      timeZone: 'UTC',
    });
    expect(toTodoDate('2030-03-01')).toEqual({ dateTime: '2030-03-01T00:00:00.0000000', timeZone: 'UTC' });
    expect(toTodoDate('not a date')).toBeUndefined();
  });

  it('goes back to a task body that reads back to the same fields', () => {
    const fields = toTaskFields(recorded, LIST);
    const body = toTodoTask({ ...fields });
    expect(body).toEqual({
      ok: true,
      value: {
        title: 'Send the proposal',
        body: { contentType: 'text', content: 'Ask about budget' },
        status: 'completed',
        dueDateTime: { dateTime: '2030-01-09T00:00:00.0000000', timeZone: 'UTC' },
      },
    });
    const written = body.ok ? body.value : {};
    const back = toTaskFields(
      { id: recorded.id, ...written, completedDateTime: recorded.completedDateTime } as TodoTask,
      LIST,
    );
    expect(contentHash({ ...back })).toBe(contentHash({ ...fields }));
  });

  it('writes only the fields given; null clears; open is notStarted; a bad due date is refused', () => {
    expect(toTodoTask({ status: 'open', notes: null, dueAt: null, title: null })).toEqual({
      ok: true,
      value: {
        status: 'notStarted',
        body: { contentType: 'text', content: '' },
        dueDateTime: null,
        title: '',
      },
    });
    expect(toTodoTask({ listId: LIST, completedAt: '2030-01-01T00:00:00Z', parentId: 'p' })).toEqual({
      ok: true,
      value: {},
    });
    expect(toTodoTask({ dueAt: 'tomorrow-ish' }).ok).toBe(false);
  });

  it('tags our creates with an open extension and finds the tag again', () => {
    const ext = originExtension('key-1', 'entity-1');
    expect(ext).toEqual({
      '@odata.type': 'microsoft.graph.openTypeExtension',
      extensionName: ORIGIN_EXTENSION,
      idempotencyKey: 'key-1',
      entityId: 'entity-1',
    });
    // As Graph renders it under $expand=extensions.
    const rendered = {
      '@odata.type': '#microsoft.graph.openTypeExtension',
      id: `Microsoft.OutlookServices.OpenTypeExtension.${ORIGIN_EXTENSION}`,
      extensionName: ORIGIN_EXTENSION,
      idempotencyKey: 'key-1',
      entityId: 'entity-1',
    };
    expect(originOf({ ...recorded, extensions: [rendered] })).toEqual({
      idempotencyKey: 'key-1',
      entityId: 'entity-1',
    });
    expect(
      originOf({ ...recorded, extensions: [{ ...rendered, extensionName: 'other', id: 'other' }] }),
    ).toBe(undefined);
    expect(originOf(recorded)).toBeUndefined();
  });

  it('splits external ids into list and task', () => {
    expect(splitExternalId(`${LIST}/${recorded.id}`)).toEqual({ listId: LIST, taskId: recorded.id });
    expect(splitExternalId(recorded.id)).toBeUndefined();
    expect(splitExternalId(`${LIST}/`)).toBeUndefined();
  });
});
