import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionContext, Cursor, PullPage } from '../contract/connector';
import { drain, unwrap } from '../contract/contract-suite';
import { readRound, watermarks } from '../contract/testing/watermark-rounds';
import { GoogleTestKit, type GoogleUser } from '../google-common/testing/google-test-kit';
import { createGoogleTasksConnector } from './google-tasks.connector';

/** The overlap a watermark keeps behind its round's start (the connector's default). */
const OVERLAP_MS = 5 * 60_000;
// Near the real time: a pull asks for tasks updated since a time taken from this clock.
let clock = Date.now();
const connector = createGoogleTasksConnector({ pageSize: 3, retry: { baseDelayMs: 10 }, now: () => clock });
let kit: GoogleTestKit;

async function seed(user: GoogleUser, count: number): Promise<void> {
  for (let n = 0; n < count; n++) await kit.ui(user, 'POST', 'tasks', { title: `Task ${n}` });
}

const round = (ctx: ConnectionContext, from: Cursor): Promise<PullPage[]> =>
  readRound(connector, 'pull', ctx, from, () => {
    clock += 60_000;
  });

beforeAll(async () => {
  kit = await GoogleTestKit.start();
});
afterAll(async () => {
  await kit.close();
});

describe('google-tasks watermark', () => {
  it('a pull round carries no watermark until its last page, which carries its start less the overlap', async () => {
    const user = await kit.createUser('watermark-pull');
    const ctx = kit.context(user);
    clock = Date.now();
    const backfill = await drain(connector, ctx, 'backfill', {});
    await seed(user, 8);
    const startedAt = Date.now();
    clock = startedAt;
    const pages = await round(ctx, backfill.cursor);
    expect(pages.length).toBeGreaterThan(2);
    expect(pages.flatMap((p) => p.changes)).toHaveLength(8);
    expect(watermarks(pages.slice(0, -1))).toEqual(pages.slice(0, -1).map(() => undefined));
    expect(pages.at(-1)!.watermark).toEqual(new Date(startedAt - OVERLAP_MS));
  });

  it('a round resumed from a cursor stored without its start finishes without a watermark', async () => {
    const user = await kit.createUser('watermark-legacy');
    const ctx = kit.context(user);
    clock = Date.now();
    const backfill = await drain(connector, ctx, 'backfill', {});
    await seed(user, 5);
    const first = unwrap(await connector.pull(ctx, backfill.cursor));
    expect(first).toMatchObject({ done: false, cursor: { pullStartedAt: expect.any(String) } });
    const rest = await round(ctx, { ...first.cursor, pullStartedAt: null });
    expect(rest.at(-1)!.done).toBe(true);
    expect(watermarks(rest)).toEqual(rest.map(() => undefined));
  });
});
