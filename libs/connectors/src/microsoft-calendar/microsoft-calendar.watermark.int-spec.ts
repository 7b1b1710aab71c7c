import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionContext, Cursor, PullPage } from '../contract/connector';
import { drain, unwrap } from '../contract/contract-suite';
import { expectWatermarkAtEnd, readRound, watermarks } from '../contract/testing/watermark-rounds';
import { MicrosoftTestKit, type MicrosoftUser } from '../microsoft-common/testing/microsoft-test-kit';
import { createMicrosoftCalendarConnector } from './microsoft-calendar.connector';
import { wallAt } from './microsoft-calendar.contract-harness';

// Near the real time: the calendar view's range is taken from this clock.
let clock = Date.now();
const connector = createMicrosoftCalendarConnector({
  pageSize: 4,
  retry: { baseDelayMs: 10 },
  now: () => clock,
});
let kit: MicrosoftTestKit;

async function seed(user: MicrosoftUser, count: number, label: string): Promise<void> {
  const from = Date.now();
  for (let n = 0; n < count; n++)
    await kit.ui(user, 'POST', 'calendar/events', {
      subject: `${label} ${n}`,
      start: { dateTime: wallAt(from, 3 + n, 10), timeZone: 'UTC' },
      end: { dateTime: wallAt(from, 3 + n, 11), timeZone: 'UTC' },
    });
}

const round = (ctx: ConnectionContext, mode: 'backfill' | 'pull', from: Cursor): Promise<PullPage[]> =>
  readRound(connector, mode, ctx, from, () => {
    clock += 60_000;
  });

beforeAll(async () => {
  kit = await MicrosoftTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('microsoft-calendar watermark', () => {
  it('a backfill carries a watermark on its last page only: its start less the skew', async () => {
    const user = await kit.createUser('watermark-backfill');
    await seed(user, 10, 'Meeting');
    const startedAt = Date.now();
    clock = startedAt;
    const pages = await round(kit.context(user), 'backfill', {});
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.flatMap((p) => p.changes)).toHaveLength(10);
    expectWatermarkAtEnd(pages, startedAt);
  });

  it('a delta round carries no watermark until its last page, which carries its start less the skew', async () => {
    const user = await kit.createUser('watermark-pull');
    const ctx = kit.context(user);
    await seed(user, 1, 'Before');
    const backfill = await drain(connector, ctx, 'backfill', {});
    await seed(user, 10, 'After');
    const startedAt = Date.now();
    clock = startedAt;
    const pages = await round(ctx, 'pull', backfill.cursor);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.flatMap((p) => p.changes)).toHaveLength(10);
    expectWatermarkAtEnd(pages, startedAt);
    // The next round takes a start of its own.
    const nextStartedAt = clock + 3_600_000;
    clock = nextStartedAt;
    expectWatermarkAtEnd(await round(ctx, 'pull', pages.at(-1)!.cursor), nextStartedAt);
  });

  it('a round resumed from a cursor stored without its start finishes without a watermark', async () => {
    const user = await kit.createUser('watermark-legacy');
    const ctx = kit.context(user);
    await seed(user, 1, 'Before');
    const backfill = await drain(connector, ctx, 'backfill', {});
    await seed(user, 6, 'After');
    const first = unwrap(await connector.pull(ctx, backfill.cursor));
    expect(first).toMatchObject({ done: false, cursor: { startedAt: expect.any(Number) } });
    const { startedAt: _dropped, ...stored } = first.cursor;
    const rest = await round(ctx, 'pull', stored);
    expect(rest.at(-1)!.done).toBe(true);
    expect(watermarks(rest)).toEqual(rest.map(() => undefined));
  });
});
