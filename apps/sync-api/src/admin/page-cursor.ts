import { z } from 'zod';

/** Where a newest-first page stopped: the (created_at, id) of its last row. */
export interface PageCursor {
  createdAt: Date;
  id: string;
}

export const MAX_PAGE_SIZE = 200;

/** Opaque to callers: base64url of the JSON pair `[createdAt, id]`. */
export const encodePageCursor = ({ createdAt, id }: PageCursor): string =>
  Buffer.from(JSON.stringify([createdAt.toISOString(), id]), 'utf8').toString('base64url');

const cursorPair = z.tuple([z.iso.datetime(), z.uuid()]);

export function decodePageCursor(value: string): PageCursor | undefined {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const pair = cursorPair.safeParse(decoded);
  if (!pair.success) return undefined;
  const [createdAt, id] = pair.data;
  return { createdAt: new Date(createdAt), id: id.toLowerCase() };
}

const pageCursor = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    const cursor = decodePageCursor(value);
    if (cursor === undefined) {
      ctx.addIssue({ code: 'custom', message: 'not a cursor this API returned' });
      return z.NEVER;
    }
    return cursor;
  })
  .describe('`nextCursor` of the previous page.');

/** The paging part of a newest-first list query. */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: pageCursor.optional(),
};

export const nextCursorField = z
  .string()
  .nullable()
  .describe('Pass as `cursor` for the next page; null on the last page.');

/**
 * Cuts one row more than asked (which says whether there is a next page) down to the page,
 * and the cursor after its last row.
 */
export function toPage<T extends PageCursor>(
  rows: readonly T[],
  limit: number,
): { rows: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { rows: page, nextCursor: rows.length > limit && last ? encodePageCursor(last) : null };
}
