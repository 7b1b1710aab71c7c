import type { LogEvent } from '@syncline/log';
import { describe, expect, it } from 'vitest';
import { segmentsOf } from './sync-stage';

const event = (key: string, op: LogEvent['op'], record = key, connectionId = 'c1', writeOp?: string) =>
  ({
    eventKey: key,
    op,
    connectionId,
    entityType: 'person',
    externalId: record,
    fields: writeOp === undefined ? {} : { write: { op: writeOp } },
  }) as unknown as LogEvent;
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

  it("folds our writes' claims and receipts first, before the reports of other records", () => {
    const batch = [
      event('a', 'upsert', 'r1'),
      event('claim', 'claim', 'r2'),
      event('b', 'upsert', 'r2'),
      event('receipt', 'receipt', 'r3', 'c1', 'update'),
    ];
    expect(keys(segmentsOf(batch))).toEqual([['claim', 'receipt', 'a', 'b']]);
  });

  it('cuts before a write whose record a report of the segment named (that report came first)', () => {
    const batch = [event('a', 'upsert', 'r1'), event('b', 'upsert', 'r2'), event('receipt', 'receipt', 'r1')];
    expect(keys(segmentsOf(batch))).toEqual([['a', 'b'], ['receipt']]);
  });

  it("cuts before a create's receipt after a report of its connection (the link it makes could place that report)", () => {
    const batch = [
      event('a', 'upsert', 'r1', 'c1'),
      event('elsewhere', 'receipt', 'r9', 'c2', 'create'),
      event('made', 'receipt', 'r2', 'c1', 'create'),
      event('b', 'upsert', 'r3', 'c1'),
    ];
    expect(keys(segmentsOf(batch))).toEqual([
      ['elsewhere', 'a'],
      ['made', 'b'],
    ]);
  });

  it('makes no segment of an empty batch', () => {
    expect(segmentsOf([])).toEqual([]);
  });
});
