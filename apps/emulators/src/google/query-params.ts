import { googleErrors } from './google-errors';

/** A parsed query string: googleapis sends array parameters as repeated keys. */
export type Query = Record<string, string | string[] | undefined>;

export const firstParam = (q: Query, name: string): string | undefined => {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
};

export const allParams = (q: Query, name: string): string[] => {
  const v = q[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/** An integer parameter; above `max` is clamped, as Google does for page sizes. */
export function intParam(q: Query, name: string, opts: { def: number; min: number; max: number }): number {
  const raw = firstParam(q, name);
  if (raw === undefined || raw === '') return opts.def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < opts.min) {
    throw googleErrors.invalid(
      `Invalid value '${raw}'. Values must be within the range: [${opts.min}, ${opts.max}]`,
      name,
    );
  }
  return Math.min(n, opts.max);
}

export function boolParam(q: Query, name: string, def: boolean): boolean {
  const raw = firstParam(q, name);
  if (raw === undefined || raw === '') return def;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw googleErrors.invalid(`Invalid boolean value: '${raw}'.`, name);
}

/** An RFC 3339 timestamp parameter as epoch ms. */
export function timeParam(q: Query, name: string): number | undefined {
  const raw = firstParam(q, name);
  if (raw === undefined || raw === '') return undefined;
  const ms = parseRfc3339(raw);
  if (ms === undefined) throw googleErrors.invalid(`Invalid value for: ${name}`, name);
  return ms;
}

/** Google insists on an offset or `Z`; a bare local time is refused. */
export function parseRfc3339(raw: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(raw)) return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? undefined : ms;
}
