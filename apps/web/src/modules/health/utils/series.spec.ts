import { describe, expect, it } from 'vitest';
import {
  byAttention,
  consumerLagRows,
  failureCodes,
  lagRows,
  latestAndPeak,
  mostBehind,
  statusSubject,
  timeLabel,
  type WritesPoint,
  writesRows,
  writesSummary,
} from './series';

const at = (h: number, m: number) => new Date(2026, 11, 11, h, m).toISOString();

describe('health series', () => {
  it('labels a point by its local hour and minute', () => {
    expect(timeLabel(at(9, 5))).toBe('09:05');
    expect(timeLabel(at(23, 59))).toBe('23:59');
  });

  it('gives each refusal code its column, the most frequent first, zero where a bucket had none', () => {
    const points: WritesPoint[] = [
      { at: at(10, 0), writesOk: 3, writesFailed: { NotFound: 1 } },
      { at: at(10, 5), writesOk: 0, writesFailed: { ValidationFailed: 2, NotFound: 0 } },
      { at: at(10, 10), writesOk: 1, writesFailed: { ValidationFailed: 1, Conflict: 1 } },
    ];
    const codes = failureCodes(points);
    expect(codes).toEqual(['ValidationFailed', 'Conflict', 'NotFound']);
    expect(writesRows(points, codes)).toEqual([
      { time: '10:00', Sent: 3, ValidationFailed: 0, Conflict: 0, NotFound: 1 },
      { time: '10:05', Sent: 0, ValidationFailed: 2, Conflict: 0, NotFound: 0 },
      { time: '10:10', Sent: 1, ValidationFailed: 1, Conflict: 1, NotFound: 0 },
    ]);
    expect(writesSummary(points, 6)).toBe(
      '4 writes sent in the last 6 hours; refused: 3 ValidationFailed, 1 Conflict, 1 NotFound.',
    );
    expect(writesSummary([{ at: at(10, 0), writesOk: 1, writesFailed: {} }], 1)).toBe(
      '1 write sent in the last 1 hour, none refused.',
    );
  });

  it('shows the watermark delay in minutes, and a gap (not zero) without a watermark', () => {
    expect(
      lagRows([
        { at: at(10, 0), lagEvents: 12, watermarkDelaySeconds: 90 },
        { at: at(10, 1), lagEvents: 0, watermarkDelaySeconds: null },
      ]),
    ).toEqual([
      { time: '10:00', lag: 12, delay: 1.5 },
      { time: '10:01', lag: 0, delay: null },
    ]);
    expect(consumerLagRows([{ at: at(10, 0), consumerLag: 7 }])).toEqual([{ time: '10:00', lag: 7 }]);
  });

  it('reads the latest and the highest value, skipping gaps', () => {
    expect(latestAndPeak([3, null, 9, 4])).toEqual({ latest: 4, peak: 9 });
    expect(latestAndPeak([5, null])).toEqual({ latest: null, peak: 5 });
    expect(latestAndPeak([])).toEqual({ latest: null, peak: null });
  });

  it('opens the lag chart on the connection most behind now', () => {
    const connections = [
      { id: 'a', lag: { events: 2 }, watermarkDelaySeconds: 10 },
      { id: 'b', lag: { events: 2 }, watermarkDelaySeconds: 600 },
      { id: 'c', lag: { events: 0 }, watermarkDelaySeconds: 9_000 },
    ];
    expect(mostBehind(connections)?.id).toBe('b');
    expect(mostBehind([{ id: 'x', lag: { events: 0 }, watermarkDelaySeconds: null }])?.id).toBe('x');
    expect(mostBehind([])).toBeUndefined();
  });

  it("reads a connection's health as the status and fix of the connections page read a connection", () => {
    expect(
      statusSubject({
        status: 'backfilling',
        dryRun: false,
        hasCredentials: true,
        backfill: { seen: 40, total: 100 },
        lag: { events: 3 },
        watermarkDelaySeconds: null,
        lastErrorCode: 'RateLimited',
      }),
    ).toEqual({
      status: 'backfilling',
      dryRun: false,
      hasCredentials: true,
      state: {
        backfill: { seen: 40, estimatedTotal: 100 },
        lag: { events: 3 },
        watermarkDelaySeconds: null,
        lastErrorCode: 'RateLimited',
      },
    });
  });
});

describe('byAttention', () => {
  it('puts what needs an admin first and Live last, keeping the order within a status', () => {
    const items = [
      { id: 'a', kind: 'live' },
      { id: 'b', kind: 'behind' },
      { id: 'c', kind: 'error' },
      { id: 'd', kind: 'live' },
      { id: 'e', kind: 'action_required' },
      { id: 'f', kind: 'paused' },
    ];
    expect(byAttention(items, (i) => i.kind).map((i) => i.id)).toEqual(['e', 'c', 'b', 'f', 'a', 'd']);
  });
});
