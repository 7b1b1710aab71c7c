// No imports: the function is pure, so any package (a browser bundle too, by this file's path)
// can use it without pulling in Node modules.

/**
 * JSON with object keys sorted (by UTF-16 code units), so equal values have equal text: what
 * content compares and content hashes read. Otherwise it reads a value as `JSON.stringify`
 * does: a member whose value is undefined is left out, undefined elsewhere (top level, array
 * element) is `null`, null stays null (`{"a":null}` is not `{}`: see `withoutNulls` for the
 * callers to whom it is), a Date is its ISO text, -0 is `0`, NaN and ±Infinity are `null`.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * The value with every object member that is null or undefined left out, at any depth (array
 * elements stay, so positions keep their meaning): for callers to whom a null member means
 * "no value", as a missing one does.
 */
export function withoutNulls(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map(withoutNulls);
  // fromEntries defines own members: a key "__proto__" stays a key.
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}
