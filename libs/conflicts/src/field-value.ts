// A field is stored in the document as one immutable string "<hlc base36>|<canonical JSON>":
// a single scalar op per edit keeps documents small, and the hybrid logical clock travels
// with the value so every replica settles lww the same way.

/** Counter bits below the milliseconds of a hybrid logical clock value. */
const HLC_COUNTER = 1024;

export const hlcOf = (ms: number, counter = 0): number => ms * HLC_COUNTER + counter;
export const hlcMillis = (hlc: number): number => Math.floor(hlc / HLC_COUNTER);

export function encodeFieldValue(hlc: number, json: string): string {
  return `${hlc.toString(36)}|${json}`;
}

export function decodeFieldValue(stored: string): { hlc: number; json: string } {
  const bar = stored.indexOf('|');
  return { hlc: Number.parseInt(stored.slice(0, bar), 36), json: stored.slice(bar + 1) };
}

/** JSON with object keys sorted, so equal values have equal text (the content compare). */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
