import type { LogEvent } from '@syncline/log';
import { describe, expect, it } from 'vitest';
import { type Receipt, receiptsFor } from './receipts';
import { CLAIM_LIFETIME_MS } from './write-events';

const t = Date.parse('2026-12-04T10:00:00.000Z');
const record = 'c1|person|r1';
const report = (cameAt: number) =>
  ({ connectionId: 'c1', entityType: 'person', externalId: 'r1', ingestedAt: new Date(cameAt) }) as LogEvent;
const receipt = (key: string, createdAt: number, extra: Partial<Receipt> = {}): Receipt => ({
  key,
  prior: {},
  entityId: 'e1',
  sentAt: new Date(createdAt - 100),
  heads: [],
  fields: {},
  createdAt: new Date(createdAt),
  applied: false,
  ...extra,
});

describe('receiptsFor: what a report is sorted against, in the log’s own time', () => {
  const all = new Map([
    [
      record,
      [
        receipt('old-applied', t - 11 * 60_000, { applied: true }),
        receipt('recent-applied', t - 9 * 60_000, { applied: true }),
        receipt('old-unapplied', t - 60 * 60_000),
        receipt('old-claim', t - CLAIM_LIFETIME_MS - 1, { inFlight: true }),
        receipt('claim', t - 60_000, { inFlight: true }),
      ],
    ],
  ]);

  it('keeps unapplied receipts, recently applied ones and live claims, as of when the report came', () => {
    expect(receiptsFor(all, report(t)).map((r) => r.key)).toEqual([
      'recent-applied',
      'old-unapplied',
      'claim',
    ]);
  });

  it('gives a report that came later (a fold behind the log, or a replay) no more than it came to', () => {
    expect(receiptsFor(all, report(t + 10 * 60_000)).map((r) => r.key)).toEqual(['old-unapplied']);
  });

  it('has nothing for a record without writes', () => {
    expect(receiptsFor(all, { ...report(t), externalId: 'r2' } as LogEvent)).toEqual([]);
  });
});
