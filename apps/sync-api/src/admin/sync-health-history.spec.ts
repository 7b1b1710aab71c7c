import { describe, expect, it } from 'vitest';
import {
  type HistoryBucketRow,
  historyBucketSeconds,
  MAX_HISTORY_POINTS,
  toHistorySeries,
  toWorkspaceSeries,
} from './sync-health-history';

const A = { id: 'a', provider: 'hubspot', displayName: 'CRM A' };
const B = { id: 'b', provider: 'gmail', displayName: null };
const t = (minute: number) => new Date(Date.UTC(2026, 11, 11, 10, minute));
const bucket = (connectionId: string, minute: number, over: Partial<HistoryBucketRow> = {}) => ({
  connectionId,
  at: t(minute),
  lagEvents: 0,
  watermarkDelaySeconds: null,
  pendingWrites: 0,
  writesOk: 0,
  consumerLag: 0,
  deadLettersOpen: 0,
  ...over,
});

describe('historyBucketSeconds', () => {
  it('keeps every range within the most points a series holds', () => {
    for (const hours of [1, 6, 24, 72, 168]) {
      const seconds = historyBucketSeconds(hours);
      expect(Number.isInteger(seconds)).toBe(true);
      expect(Math.ceil((hours * 3_600) / seconds)).toBeLessThanOrEqual(MAX_HISTORY_POINTS);
    }
    expect(historyBucketSeconds(1)).toBe(12);
    // Past a minute, whole minutes: each bucket holds as many minute samples as the next.
    expect(historyBucketSeconds(6)).toBe(120);
    expect(historyBucketSeconds(24)).toBe(300);
  });
});

describe('toHistorySeries', () => {
  it('gives each connection its points in time order, with the refused writes of each bucket by code', () => {
    const series = toHistorySeries(
      [A, B],
      [
        bucket('a', 2, { lagEvents: 5, writesOk: 3 }),
        bucket('a', 1, { lagEvents: 9, watermarkDelaySeconds: 30, pendingWrites: 2 }),
        bucket('b', 1),
      ],
      [
        { connectionId: 'a', at: t(2), code: 'ValidationFailed', writes: 2 },
        { connectionId: 'a', at: t(2), code: 'NotFound', writes: 1 },
      ],
    );
    expect(series.connections).toEqual([
      {
        ...A,
        points: [
          {
            at: t(1).toISOString(),
            lagEvents: 9,
            watermarkDelaySeconds: 30,
            pendingWrites: 2,
            writesOk: 0,
            writesFailed: {},
          },
          {
            at: t(2).toISOString(),
            lagEvents: 5,
            watermarkDelaySeconds: null,
            pendingWrites: 0,
            writesOk: 3,
            writesFailed: { ValidationFailed: 2, NotFound: 1 },
          },
        ],
      },
      {
        ...B,
        points: [expect.objectContaining({ at: t(1).toISOString(), writesFailed: {} })],
      },
    ]);
  });

  it("takes the workspace's figures once per bucket (the largest its connections' samples carry)", () => {
    const series = toHistorySeries(
      [A, B],
      [
        bucket('a', 1, { consumerLag: 4, deadLettersOpen: 1, writesOk: 2, pendingWrites: 1 }),
        bucket('b', 1, { consumerLag: 7, deadLettersOpen: 1, writesOk: 3, pendingWrites: 5 }),
        bucket('b', 2, { consumerLag: 0, deadLettersOpen: 2 }),
      ],
      [
        { connectionId: 'a', at: t(1), code: 'NotFound', writes: 1 },
        { connectionId: 'b', at: t(1), code: 'NotFound', writes: 2 },
        { connectionId: 'b', at: t(1), code: 'ValidationFailed', writes: 1 },
      ],
    );
    expect(series.workspace).toEqual([
      {
        at: t(1).toISOString(),
        consumerLag: 7,
        deadLettersOpen: 1,
        writesOk: 5,
        writesFailed: { NotFound: 3, ValidationFailed: 1 },
        pendingWrites: 6,
      },
      {
        at: t(2).toISOString(),
        consumerLag: 0,
        deadLettersOpen: 2,
        writesOk: 0,
        writesFailed: {},
        pendingWrites: 0,
      },
    ]);
    // The connections' own points keep their own counts.
    expect(series.connections[0]!.points[0]!.writesFailed).toEqual({ NotFound: 1 });
  });

  it('leaves out a connection that is gone, and keeps one without samples with no points', () => {
    const series = toHistorySeries(
      [B],
      [bucket('gone', 1, { consumerLag: 3 })],
      [{ connectionId: 'gone', at: t(1), code: 'X', writes: 1 }],
    );
    expect(series).toEqual({ connections: [{ ...B, points: [] }], workspace: [] });
  });
});

describe('toWorkspaceSeries', () => {
  it('orders the buckets in time and gives each its refused writes by code', () => {
    const row = (minute: number, writesOk: number) => ({
      at: t(minute),
      consumerLag: minute,
      deadLettersOpen: 1,
      writesOk,
      pendingWrites: 2,
    });
    expect(
      toWorkspaceSeries(
        [row(2, 5), row(1, 3)],
        [
          { at: t(2), code: 'NotFound', writes: 1 },
          { at: t(2), code: 'ValidationFailed', writes: 2 },
        ],
      ),
    ).toEqual([
      {
        at: t(1).toISOString(),
        consumerLag: 1,
        deadLettersOpen: 1,
        writesOk: 3,
        writesFailed: {},
        pendingWrites: 2,
      },
      {
        at: t(2).toISOString(),
        consumerLag: 2,
        deadLettersOpen: 1,
        writesOk: 5,
        writesFailed: { NotFound: 1, ValidationFailed: 2 },
        pendingWrites: 2,
      },
    ]);
  });
});
