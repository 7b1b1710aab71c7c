import { createHash } from 'node:crypto';

/**
 * Hash of unified fields, independent of key order, so a write receipt and a later report
 * of the same content compare equal. Undefined and null both mean "no value".
 */
export function contentHash(fields: Readonly<Record<string, unknown>>): string {
  return createHash('sha256').update(canonicalJson(fields)).digest('base64url');
}

function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
