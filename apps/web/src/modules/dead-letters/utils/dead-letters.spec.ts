import { describe, expect, it } from 'vitest';
import { parseDeadLetterSearch, toLetterQuery } from './dead-letter-search';
import { errorReport, isRetryable, payloadSummary, sourceSentence } from './letter-text';

const CONNECTION = '0b7c3a52-35a4-4a4e-9d63-2f1e1f4a9c11';

describe('parseDeadLetterSearch', () => {
  it('keeps a known status and a connection id, and drops the rest', () => {
    expect(parseDeadLetterSearch({ status: 'retried', connectionId: CONNECTION.toUpperCase() })).toEqual({
      status: 'retried',
      connectionId: CONNECTION,
    });
    expect(parseDeadLetterSearch({ status: 'all' })).toEqual({ status: 'all' });
    expect(parseDeadLetterSearch({ status: 'pending', connectionId: 'nope', other: 1 })).toEqual({});
  });

  it('leaves open out of the URL: it is what the page shows without one', () => {
    expect(parseDeadLetterSearch({ status: 'open' })).toEqual({});
  });
});

describe('toLetterQuery', () => {
  it('asks for open letters by default, every status for all', () => {
    expect(toLetterQuery({})).toEqual({ status: 'open' });
    expect(toLetterQuery({ status: 'all', connectionId: CONNECTION })).toEqual({ connectionId: CONNECTION });
    expect(toLetterQuery({ status: 'discarded' })).toEqual({ status: 'discarded' });
  });
});

describe('letter text', () => {
  const letter = {
    id: 'a1',
    source: 'push',
    connectionId: CONNECTION,
    eventKey: null,
    errorCode: 'Validation',
    errorMessage: 'Property values were not valid: jobtitle',
    attempts: 5,
    createdAt: '2026-12-04T03:00:00.000Z',
    groupName: null,
  };

  it('copies the error with what failed, where and when', () => {
    expect(errorReport(letter, 'CRM A')).toBe(
      [
        'Validation: Property values were not valid: jobtitle',
        'dead letter a1 (push)',
        'connection: CRM A',
        'attempts: 5, failed at 2026-12-04T03:00:00.000Z',
      ].join('\n'),
    );
    expect(errorReport({ ...letter, source: 'log', groupName: 'sync', eventKey: 'c-1:4' }, null)).toContain(
      `dead letter a1 (log, group sync)\nconnection: ${CONNECTION}\nevent: c-1:4`,
    );
  });

  it('summarises each source’s payload, and nothing of one it cannot read', () => {
    expect(
      payloadSummary('log', {
        entityType: 'person',
        externalId: '901',
        op: 'upsert',
        eventTime: '2026-12-04T03:00:00Z',
        fields: { email: 'a@b.c', jobTitle: 'CTO' },
      }),
    ).toEqual([
      'Updating a person (901 in its system)',
      'Changed at 2026-12-04T03:00:00Z',
      'Fields: email, jobTitle',
    ]);
    expect(payloadSummary('push', { outboxIds: ['1', '2'], op: 'update' })).toEqual([
      '2 pending writes',
      'Operation: update',
    ]);
    expect(payloadSummary('queue', { queue: 'pull', job: 'connection.pull' })).toEqual([
      'Job: connection.pull',
      'Queue: pull',
    ]);
    expect(payloadSummary('log', 'not an object')).toEqual([]);
    expect(payloadSummary('log', null)).toEqual([]);
  });

  it('says which sources a retry can redo', () => {
    expect([isRetryable('log'), isRetryable('push'), isRetryable('queue')]).toEqual([true, true, false]);
    expect(sourceSentence('push')).toMatch(/refused/);
    expect(sourceSentence('webhook')).toBe('Work from "webhook" failed');
  });
});
