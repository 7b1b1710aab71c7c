import { expect } from 'vitest';
import type { ConnectionContext, Connector, Cursor, PullPage } from '../connector';
import { unwrap } from '../contract-suite';

/** The clock-skew margin a mail or calendar connector's watermark keeps behind its round's start. */
export const SKEW_MS = 5 * 60_000;

/**
 * Every page of one round (a backfill, or a pull round) from `from`, the cursor stored and read
 * back between pages as the pull service does, and `tick` called at each page (a test moves the
 * connector's clock on, so a start taken again on a later page shows).
 */
export async function readRound(
  connector: Connector,
  mode: 'backfill' | 'pull',
  ctx: ConnectionContext,
  from: Cursor,
  tick: () => void,
): Promise<PullPage[]> {
  const pages: PullPage[] = [];
  let cursor = from;
  while (pages.length < 50) {
    const page = unwrap(await connector[mode](ctx, cursor));
    pages.push(page);
    if (page.done) return pages;
    cursor = JSON.parse(JSON.stringify(page.cursor)) as Cursor;
    tick();
  }
  throw new Error(`${mode} did not finish in 50 pages`);
}

export const watermarks = (pages: readonly PullPage[]) => pages.map((p) => p.watermark);

/** No page of the round but its last carries a watermark; the last carries `startedAt` less `skewMs`. */
export function expectWatermarkAtEnd(pages: readonly PullPage[], startedAt: number, skewMs = SKEW_MS): void {
  expect(pages.at(-1)!.done).toBe(true);
  expect(watermarks(pages.slice(0, -1))).toEqual(pages.slice(0, -1).map(() => undefined));
  expect(pages.at(-1)!.watermark).toEqual(new Date(startedAt - skewMs));
}
