import { describe, expect, it } from 'vitest';
import { decodePageCursor, encodePageCursor, toPage } from './page-cursor';

const row = (n: number) => ({
  id: `0190a000-0000-7000-8000-00000000000${n}`,
  createdAt: new Date(Date.UTC(2026, 10, 30, 12, 0, 0, n)),
});

describe('page cursor', () => {
  it('round-trips (created_at, id) through an opaque base64url string', () => {
    const cursor = encodePageCursor(row(1));
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodePageCursor(cursor)).toEqual(row(1));
  });

  it('refuses anything it did not make', () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const value of [
      'not-a-cursor',
      '',
      encode(['2026-11-30T12:00:00.000Z']),
      encode(['yesterday', row(1).id]),
      encode(['2026-11-30T12:00:00.000Z', "1' OR '1'='1"]),
      encode({ createdAt: '2026-11-30T12:00:00.000Z', id: row(1).id }),
    ])
      expect(decodePageCursor(value), value).toBeUndefined();
  });

  it('cuts the extra row and points the next cursor at the last row of the page', () => {
    const rows = [row(3), row(2), row(1)];
    const page = toPage(rows, 2);
    expect(page.rows).toEqual([row(3), row(2)]);
    expect(decodePageCursor(page.nextCursor!)).toEqual(row(2));
    expect(toPage(rows, 3)).toEqual({ rows, nextCursor: null });
  });
});
