import { createHash, timingSafeEqual } from 'node:crypto';

/** String equality in time independent of where the strings differ (and of their lengths). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}
