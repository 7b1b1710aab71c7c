import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionContext, Cursor, PullPage } from '../contract/connector';
import { drain, unwrap } from '../contract/contract-suite';
import { expectWatermarkAtEnd, readRound, watermarks } from '../contract/testing/watermark-rounds';
import { GoogleTestKit, type GoogleUser } from '../google-common/testing/google-test-kit';
import { createGmailConnector } from './gmail.connector';

let clock = Date.now();
const connector = createGmailConnector({ pageSize: 3, retry: { baseDelayMs: 10 }, now: () => clock });
let kit: GoogleTestKit;

async function seed(user: GoogleUser, count: number): Promise<void> {
  for (let n = 0; n < count; n++)
    await kit.ui(user, 'POST', 'gmail/messages', {
      from: 'Ann Lee <ann@example.com>',
      to: [user.email],
      subject: `Hello ${n}`,
      text: `body ${n}`,
    });
}

const round = (ctx: ConnectionContext, mode: 'backfill' | 'pull', from: Cursor): Promise<PullPage[]> =>
  readRound(connector, mode, ctx, from, () => {
    clock += 60_000;
  });

beforeAll(async () => {
  kit = await GoogleTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('gmail watermark', () => {
  it('a backfill carries a watermark on its last page only: its start less the skew', async () => {
    const user = await kit.createUser('watermark-backfill');
    await seed(user, 7);
    const startedAt = Date.now();
    clock = startedAt;
    const pages = await round(kit.context(user), 'backfill', {});
    expect(pages.length).toBeGreaterThan(2);
    expectWatermarkAtEnd(pages, startedAt);
  });

  it('a history round carries no watermark until its last page, which carries its start less the skew', async () => {
    const user = await kit.createUser('watermark-pull');
    const ctx = kit.context(user);
    await seed(user, 1);
    const backfill = await drain(connector, ctx, 'backfill', {});
    await seed(user, 8);
    const startedAt = Date.now();
    clock = startedAt;
    const pages = await round(ctx, 'pull', backfill.cursor);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.flatMap((p) => p.changes)).toHaveLength(8);
    expectWatermarkAtEnd(pages, startedAt);
    // The next round takes a start of its own.
    const nextStartedAt = clock + 3_600_000;
    clock = nextStartedAt;
    expectWatermarkAtEnd(await round(ctx, 'pull', pages.at(-1)!.cursor), nextStartedAt);
  });

  it('a round resumed from a cursor stored without its start finishes without a watermark', async () => {
    const user = await kit.createUser('watermark-legacy');
    const ctx = kit.context(user);
    await seed(user, 1);
    const backfill = await drain(connector, ctx, 'backfill', {});
    await seed(user, 5);
    const first = unwrap(await connector.pull(ctx, backfill.cursor));
    expect(first).toMatchObject({ done: false, cursor: { startedAt: expect.any(Number) } });
    const { startedAt: _dropped, ...stored } = first.cursor;
    const rest = await round(ctx, 'pull', stored);
    expect(rest.at(-1)!.done).toBe(true);
    expect(watermarks(rest)).toEqual(rest.map(() => undefined));
  });
});
