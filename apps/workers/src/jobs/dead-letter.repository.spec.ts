import { isUuid } from '@syncline/core';
import { describe, expect, it } from 'vitest';
import { deadLetterId } from './dead-letter.repository';

describe('deadLetterId', () => {
  it('is a UUID that names one job: same job same id, another run of the same job id another', () => {
    const id = deadLetterId({ queue: 'pull', jobId: 'pull-1', createdAt: 1 });
    expect(isUuid(id)).toBe(true);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deadLetterId({ queue: 'pull', jobId: 'pull-1', createdAt: 1 })).toBe(id);
    expect(deadLetterId({ queue: 'pull', jobId: 'pull-1', createdAt: 2 })).not.toBe(id);
    expect(deadLetterId({ queue: 'push', jobId: 'pull-1', createdAt: 1 })).not.toBe(id);
  });
});
