// A field is stored in the document as one immutable string "<hlc base36>|<canonical JSON>"
// (@syncline/core's canonicalJson, null kept: a clear is a value): a single scalar op per edit
// keeps documents small, and the hybrid logical clock travels with the value so every replica
// settles lww the same way.

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
