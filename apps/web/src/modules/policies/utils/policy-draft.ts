import { FIELDS, RECORD_TYPES, type RecordType } from '../../../lib/fields';

/** The entity types that have policies, in the order of the page's tabs (as the API spells them). */
export const POLICY_ENTITIES = ['person', 'company', 'deal', 'meeting', 'task', 'email_activity'] as const;
export type PolicyEntity = (typeof POLICY_ENTITIES)[number];

export const isPolicyEntity = (value: string): value is PolicyEntity =>
  (POLICY_ENTITIES as readonly string[]).includes(value);

export const ENTITY_LABELS: Record<PolicyEntity, string> = {
  person: 'People',
  company: 'Companies',
  deal: 'Deals',
  meeting: 'Meetings',
  task: 'Tasks',
  email_activity: 'Emails',
};

export type PolicyKind = 'lww' | 'priority' | 'manual' | 'union';
export type Policy = { kind: 'lww' | 'manual' | 'union' } | { kind: 'priority'; order: string[] };
export type PolicyMap = Record<string, Policy>;

/** The literal that ranks any person editing in Syncline in a priority order. */
export const USER_SOURCE = 'user';

/** Each strategy in a few words, and what it does in one line. */
export const STRATEGIES: Record<PolicyKind, { label: string; meaning: string }> = {
  lww: { label: 'Latest edit wins', meaning: 'The value edited last, wherever it was edited, wins.' },
  priority: {
    label: 'Source priority',
    meaning: 'The best-ranked source that has a value wins; put the sources in order below.',
  },
  manual: {
    label: 'A person decides',
    meaning: 'Concurrent edits keep both values and wait in the conflicts inbox for a person.',
  },
  union: { label: 'Merge the lists', meaning: 'Both lists are merged into one, keeping every item.' },
};

/** A field's label: the record pages' own, else its name in words ("startTime" → "Start time"). */
export function fieldLabel(entity: PolicyEntity, field: string): string {
  if ((RECORD_TYPES as readonly string[]).includes(entity)) {
    const spec = (FIELDS[entity as RecordType] as Record<string, { label: string }>)[field];
    if (spec) return spec.label;
  }
  const words = field
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase()
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The policy a field gets when the admin picks a strategy: a priority order starts from `sources`. */
export function policyOf(kind: PolicyKind, sources: readonly string[], previous?: Policy): Policy {
  if (kind !== 'priority') return { kind };
  if (previous?.kind === 'priority') return previous;
  return { kind: 'priority', order: [...sources] };
}

/**
 * A stored order completed with the sources it does not name (they rank after every listed
 * one anyway), so the admin sees and can place every source.
 */
export function completeOrder(order: readonly string[], sources: readonly string[]): string[] {
  const listed = new Set(order);
  return [...order, ...sources.filter((source) => !listed.has(source))];
}

/** `items` with the one at `from` moved to `to` (both clamped to the list). */
export function moveItem<T>(items: readonly T[], from: number, to: number): T[] {
  const next = [...items];
  if (from < 0 || from >= next.length) return next;
  const target = Math.max(0, Math.min(next.length - 1, to));
  const [item] = next.splice(from, 1) as [T];
  next.splice(target, 0, item);
  return next;
}

/** The PUT body: the whole set, only the fields that are not `lww` (a field left out goes back to it). */
export function bodyOf(draft: PolicyMap): PolicyMap {
  return Object.fromEntries(Object.entries(draft).filter(([, policy]) => policy.kind !== 'lww'));
}

const sameOrder = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, index) => item === b[index]);

export function samePolicy(a: Policy | undefined, b: Policy | undefined): boolean {
  const kindA = a?.kind ?? 'lww';
  const kindB = b?.kind ?? 'lww';
  if (kindA !== kindB) return false;
  return a?.kind === 'priority' && b?.kind === 'priority' ? sameOrder(a.order, b.order) : true;
}

/** The fields whose policy differs between the two sets. */
export function changedFields(draft: PolicyMap, saved: PolicyMap): string[] {
  const fields = new Set([...Object.keys(draft), ...Object.keys(saved)]);
  return [...fields].filter((field) => !samePolicy(draft[field], saved[field]));
}

/**
 * The fields a 400's message names, with what it says of each: the API lists its issues as
 * `fields.<field>[.<more>]: <message>`, separated by `; `. A field name may hold dots, so the
 * longest known field that fits the path wins.
 */
export function fieldErrorsOf(message: string, known: readonly string[]): Record<string, string> {
  const byLength = [...known].sort((a, b) => b.length - a.length);
  const errors: Record<string, string> = {};
  const issues = message.replace(/^invalid request:\s*/, '').split('; ');
  for (const issue of issues) {
    const colon = issue.indexOf(': ');
    if (colon < 0) continue;
    const path = issue.slice(0, colon);
    const text = issue.slice(colon + 2);
    if (!path.startsWith('fields.')) continue;
    const rest = path.slice('fields.'.length);
    const field = byLength.find((f) => rest === f || rest.startsWith(`${f}.`));
    if (field === undefined) continue;
    errors[field] = errors[field] ? `${errors[field]}; ${text}` : text;
  }
  return errors;
}

/** A set in one line for a revision: "Job title: A person decides; Phone: Source priority (CRM A › CRM B)". */
export function describeSet(
  entity: PolicyEntity,
  fields: PolicyMap,
  sourceName: (source: string) => string,
): string {
  const parts = Object.entries(fields)
    .filter(([, policy]) => policy.kind !== 'lww')
    .map(([field, policy]) => {
      const what = STRATEGIES[policy.kind].label;
      const order = policy.kind === 'priority' ? ` (${policy.order.map(sourceName).join(' › ')})` : '';
      return `${fieldLabel(entity, field)}: ${what}${order}`;
    });
  return parts.length > 0 ? parts.join('; ') : 'Every field: latest edit wins';
}
