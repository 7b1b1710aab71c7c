/** One field of two records side by side; `differs` ignores empty-versus-missing and key order. */
export interface FieldRow {
  field: string;
  a: unknown;
  b: unknown;
  differs: boolean;
}

const isEmpty = (value: unknown) =>
  value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);

function canonical(value: unknown): string {
  if (isEmpty(value)) return '';
  if (typeof value === 'string') return JSON.stringify(value.trim());
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

export const sameValue = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

/**
 * Every field either record has, the known ones first in their display order, then the
 * rest by name; a field neither has a value for is left out.
 */
export function compareFields(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  order: readonly string[] = [],
): FieldRow[] {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  const known = order.filter((name) => names.has(name));
  const rest = [...names].filter((name) => !order.includes(name)).sort();
  return [...known, ...rest]
    .map((field) => ({ field, a: a[field], b: b[field], differs: !sameValue(a[field], b[field]) }))
    .filter((row) => !(isEmpty(row.a) && isEmpty(row.b)));
}

/** The record to keep by default: the one more systems hold, else the first. */
export function suggestedSurvivor(
  a: { sourceLinks: readonly unknown[] },
  b: { sourceLinks: readonly unknown[] },
) {
  return b.sourceLinks.length > a.sourceLinks.length ? 'b' : 'a';
}
