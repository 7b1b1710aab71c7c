import type { LogEvent } from '@syncline/log';
import { describe, expect, it } from 'vitest';
import { type Segment, segmentsOf } from './sync-stage';

const event = (key: string, op: LogEvent['op'], record = key, connectionId = 'c1', writeOp?: string) =>
  ({
    eventKey: key,
    op,
    connectionId,
    entityType: 'person',
    externalId: record,
    fields: writeOp === undefined ? {} : { write: { op: writeOp } },
  }) as unknown as LogEvent;
const keys = (segments: Segment[]) =>
  segments.map((s) => [...s.writesBefore, ...s.events, ...s.writesAfter].map((e) => e.eventKey));
const parts = (segments: Segment[]) =>
  segments.map((s) => [s.writesBefore, s.events, s.writesAfter].map((part) => part.map((e) => e.eventKey)));

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

  it('folds a write after the reports of its record that came before it, and cuts before its record’s next report', () => {
    const batch = [
      event('a', 'upsert', 'r1'),
      event('b', 'upsert', 'r2'),
      event('receipt', 'receipt', 'r1'),
      event('c', 'upsert', 'r3'),
      event('again', 'upsert', 'r1'),
    ];
    expect(parts(segmentsOf(batch))).toEqual([
      [[], ['a', 'b', 'c'], ['receipt']],
      [[], ['again'], []],
    ]);
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

  it("cuts before a refused create's `existing` after a report of its connection, and folds the record's own report after it", () => {
    const batch = [
      event('a', 'upsert', 'r1', 'c1'),
      event('refused', 'existing', 'r2', 'c1'),
      event('own', 'upsert', 'r2', 'c1'),
    ];
    expect(parts(segmentsOf(batch))).toEqual([
      [[], ['a'], []],
      [['refused'], ['own'], []],
    ]);
  });

  it('makes no segment of an empty batch', () => {
    expect(segmentsOf([])).toEqual([]);
  });
});
