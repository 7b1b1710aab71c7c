import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionContext, Cursor, PullPage } from '../contract/connector';
import { drain, unwrap } from '../contract/contract-suite';
import { expectWatermarkAtEnd, readRound, watermarks } from '../contract/testing/watermark-rounds';
import { MicrosoftTestKit, type MicrosoftUser } from '../microsoft-common/testing/microsoft-test-kit';
import { createMicrosoftMailConnector } from './microsoft-mail.connector';

/** The clock-skew margin a watermark keeps behind its run's start. */
let clock = Date.now();
const connector = createMicrosoftMailConnector({ pageSize: 3, retry: { baseDelayMs: 10 }, now: () => clock });
let kit: MicrosoftTestKit;

async function receive(user: MicrosoftUser, count: number, folder = 'inbox'): Promise<void> {
  for (let n = 0; n < count; n++)
    await kit.ui(user, 'POST', 'mail/messages', {
      from: folder === 'sentitems' ? undefined : 'Ann Lee <ann@example.com>',
      to: [folder === 'sentitems' ? `client${n}@example.com` : user.upn],
      subject: `Hello ${n}`,
      body: `body ${n}`,
      folder,
    });
}

const run = (ctx: ConnectionContext, mode: 'backfill' | 'pull', from: Cursor): Promise<PullPage[]> =>
  readRound(connector, mode, ctx, from, () => {
    clock += 60_000;
  });

beforeAll(async () => {
  kit = await MicrosoftTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('microsoft-mail watermark', () => {
  it('a backfill carries a watermark on its last page only: its start less the skew', async () => {
    const user = await kit.createUser('watermark-backfill');
    await receive(user, 7);
    await receive(user, 2, 'sentitems');
    const startedAt = Date.now();
    clock = startedAt;
    const pages = await run(kit.context(user), 'backfill', {});
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.flatMap((p) => p.changes)).toHaveLength(9);
    expectWatermarkAtEnd(pages, startedAt);
  });

  it('a delta run carries no watermark until its last page, which carries its start less the skew', async () => {
    const user = await kit.createUser('watermark-pull');
    const ctx = kit.context(user);
    await receive(user, 1);
    const backfill = await drain(connector, ctx, 'backfill', {});
    await receive(user, 8);
    const startedAt = Date.now();
    clock = startedAt;
    const pages = await run(ctx, 'pull', backfill.cursor);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.flatMap((p) => p.changes)).toHaveLength(8);
    expectWatermarkAtEnd(pages, startedAt);
    // The next run takes a start of its own.
    const nextStartedAt = clock + 3_600_000;
    clock = nextStartedAt;
    expectWatermarkAtEnd(await run(ctx, 'pull', pages.at(-1)!.cursor), nextStartedAt);
  });

  it('a run resumed from a cursor stored without its start finishes without a watermark', async () => {
    const user = await kit.createUser('watermark-legacy');
    const ctx = kit.context(user);
    await receive(user, 1);
    const backfill = await drain(connector, ctx, 'backfill', {});
    await receive(user, 6);
    const first = unwrap(await connector.pull(ctx, backfill.cursor));
    expect(first).toMatchObject({ done: false, cursor: { startedAt: expect.any(Number) } });
    const { startedAt: _dropped, ...stored } = first.cursor;
    const rest = await run(ctx, 'pull', stored);
    expect(rest.at(-1)!.done).toBe(true);
    expect(watermarks(rest)).toEqual(rest.map(() => undefined));
  });
});
