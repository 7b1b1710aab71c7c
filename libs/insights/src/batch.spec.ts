import { describe, expect, it } from 'vitest';
import { batchCompute } from './batch';
import { DAY, diff, HOUR, params, retraction } from './testing/insights-fixtures';

const B = Date.parse('2026-03-02T00:00:00Z');
const DAY0 = B / DAY;

describe('batchCompute', () => {
  it('keeps a pane where the result changes: in, and out of each window', () => {
    const panes = batchCompute([diff('mail_in', B + 9 * HOUR)], params(), DAY0 + 200);
    expect(
      panes.map((p) => [p.windowEnd, p.metrics.last7.mailsIn, p.metrics.last90.mailsIn, p.metrics.trend]),
    ).toEqual([
      ['2026-03-02', 1, 1, 'warming'],
      ['2026-03-09', 0, 1, 'warming'],
      ['2026-04-01', 0, 1, 'cooling'],
      ['2026-05-31', 0, 0, 'cold'],
    ]);
    expect(panes.at(-1)?.metrics.lastContactedAt).toBe(B + 9 * HOUR);
  });

  it('leaves out what was taken back, and pairs replies within a thread', () => {
    const deleted = diff('mail_in', B + 8 * HOUR);
    const panes = batchCompute(
      [
        deleted,
        retraction(deleted),
        diff('mail_in', B + 9 * HOUR, { thread: 'x' }),
        diff('mail_out', B + 11 * HOUR, { thread: 'x' }),
      ],
      params(),
      DAY0,
    );
    expect(panes).toHaveLength(1);
    expect(panes[0]?.metrics).toMatchObject({
      last7: { mailsIn: 1, mailsOut: 1 },
      replies90: 1,
      medianReplyMs90: 2 * HOUR,
      lastContactedVia: 'mail_out',
    });
  });
});
