import type { LogEvent } from '@syncline/log';
import { describe, expect, it } from 'vitest';
import { segmentsOf } from './sync-stage';

const event = (key: string, op: LogEvent['op']) => ({ eventKey: key, op }) as LogEvent;
const keys = (segments: LogEvent[][]) => segments.map((s) => s.map((e) => e.eventKey));

describe('segmentsOf', () => {
  it('keeps a batch without merges whole', () => {
    expect(keys(segmentsOf([event('a', 'upsert'), event('b', 'delete'), event('c', 'upsert')]))).toEqual([
      ['a', 'b', 'c'],
    ]);
  });

  it('takes each merge alone, the events around it together, in order', () => {
    const batch = [
      event('a', 'upsert'),
      event('b', 'upsert'),
      event('m1', 'merge'),
      event('m2', 'merge'),
      event('c', 'upsert'),
      event('m3', 'merge'),
    ];
    expect(keys(segmentsOf(batch))).toEqual([['a', 'b'], ['m1'], ['m2'], ['c'], ['m3']]);
  });

  it('makes no segment of an empty batch', () => {
    expect(segmentsOf([])).toEqual([]);
  });
});
