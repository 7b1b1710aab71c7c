/** A version written as an ISO-8601 UTC timestamp. */
const ISO_VERSION = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/**
 * SQL condition: the version `next` may replace the link's version `held`. Versions written as
 * ISO-8601 UTC timestamps (HubSpot's `updatedAt`, as the connector reports it everywhere) order
 * as text, and an older one never replaces a newer one: a read of the record taken before a
 * write or edit whose version the link already holds, and appended or merged after it, would
 * otherwise move the link back, and the next write, conditional on that old version, would be
 * refused as stale over and over. Opaque versions (Google's etags) always replace.
 */
export function versionMayReplace(next: string, held: string): string {
  const iso = `'${ISO_VERSION.source}'`;
  return `(${held} IS NULL OR NOT (${held} ~ ${iso} AND ${next} ~ ${iso} AND ${next} COLLATE "C" < ${held}))`;
}

/** `versionMayReplace` in TypeScript, for versions folded before they are stored. */
export function mayReplace(next: string, held: string | null): boolean {
  if (held === null) return true;
  return !(ISO_VERSION.test(held) && ISO_VERSION.test(next) && next < held);
}
