import { describe, expect, it } from 'vitest';
import type { ConnectionContext, Cursor, PullPage } from '../contract/connector';
import { unwrap } from '../contract/contract-suite';
import { hubspotConnector } from './hubspot.connector';
import { OVERLAP_MS } from './hubspot-sync';
import { hubspotTestPortals } from './testing/hubspot-test-portals';

/** Every page of one round from `from`, and the real time just before and after its first page. */
async function round(
  ctx: ConnectionContext,
  mode: 'backfill' | 'pull',
  from: Cursor,
): Promise<{ pages: PullPage[]; before: number; after: number }> {
  const before = Date.now();
  const pages = [unwrap(await hubspotConnector[mode](ctx, from))];
  const after = Date.now();
  while (!pages.at(-1)!.done) {
    if (pages.length >= 100) throw new Error(`${mode} did not finish in 100 pages`);
    pages.push(unwrap(await hubspotConnector[mode](ctx, pages.at(-1)!.cursor)));
  }
  return { pages, before, after };
}

/** No page but the last carries a watermark; the last carries the round's start less the overlap. */
function expectWatermarkAtEnd({ pages, before, after }: Awaited<ReturnType<typeof round>>): void {
  expect(pages.length).toBeGreaterThan(2);
  expect(pages.slice(0, -1).map((p) => p.watermark)).toEqual(pages.slice(0, -1).map(() => undefined));
  const watermark = pages.at(-1)!.watermark?.getTime();
  expect(watermark).toBeGreaterThanOrEqual(before - OVERLAP_MS);
  expect(watermark).toBeLessThanOrEqual(after - OVERLAP_MS);
}

describe('hubspot watermark', () => {
  const { control, portal } = hubspotTestPortals('connectors-hubspot-watermark', 9_000);

  it('a backfill and a pull round each carry a watermark on their last page only', async () => {
    const { ctx, base } = await portal();
    await control('POST', `${base}/seed/contacts`, { count: 150 });
    const backfill = await round(ctx, 'backfill', {});
    expectWatermarkAtEnd(backfill);
    await control('POST', `${base}/seed/contacts`, { count: 3 });
    const pull = await round(ctx, 'pull', backfill.pages.at(-1)!.cursor);
    expect(pull.pages.flatMap((p) => p.changes).length).toBeGreaterThanOrEqual(3);
    expectWatermarkAtEnd(pull);
  });
});
