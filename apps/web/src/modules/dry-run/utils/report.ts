import { fieldLabel, RECORD_TYPES, type RecordType } from '../../../lib/fields';
import { providerName } from '../../records/utils/format';

/** How the report names an entity type. */
const ENTITY_LABEL: Readonly<Record<string, string>> = {
  person: 'Person',
  company: 'Company',
  deal: 'Deal',
  meeting: 'Meeting',
  email_activity: 'Email',
  task: 'Task',
};

export const entityLabel = (entityType: string): string => ENTITY_LABEL[entityType] ?? entityType;

/** A field as the record pages name it (people, companies, deals), else as the API spells it. */
export const fieldName = (entityType: string, field: string): string =>
  (RECORD_TYPES as readonly string[]).includes(entityType)
    ? fieldLabel(entityType as RecordType, field)
    : field;

/** A record's fields on one line: "Email: ada@x.test · Last name: Lovelace". */
export const fieldsLine = (entityType: string, fields: Readonly<Record<string, unknown>>): string =>
  Object.entries(fields)
    .map(([field, value]) => `${fieldName(entityType, field)}: ${showValue(value)}`)
    .join(' · ') || '—';

const MAX_VALUE_CHARS = 120;

/** A value of the report as one short line: empty as a dash, lists joined, anything else as JSON. */
export function showValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else if (Array.isArray(value)) text = value.length === 0 ? '—' : value.map(showValue).join(', ');
  else text = JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/** Operations in the order a reader expects them; any other after these, as spelled. */
const OPS = ['create', 'update', 'delete', 'associate', 'dissociate'] as const;
const OP_WORDS: Readonly<Record<string, [string, string]>> = {
  create: ['create', 'creates'],
  update: ['update', 'updates'],
  delete: ['delete', 'deletes'],
  associate: ['association added', 'associations added'],
  dissociate: ['association removed', 'associations removed'],
};

/** `{ create: 3, update: 1 }` → "3 creates, 1 update"; nothing → "no writes". */
export function opCountWords(counts: Readonly<Record<string, number>>): string {
  const known = OPS.filter((op) => (counts[op] ?? 0) > 0);
  const other = Object.keys(counts)
    .filter((op) => !(OPS as readonly string[]).includes(op) && (counts[op] ?? 0) > 0)
    .sort();
  const parts = [...known, ...other].map((op) => {
    const n = counts[op] ?? 0;
    const [one, many] = OP_WORDS[op] ?? [op, op];
    return `${n} ${n === 1 ? one : many}`;
  });
  return parts.length > 0 ? parts.join(', ') : 'no writes';
}

export interface SystemRef {
  provider: string;
  displayName: string | null;
}

/** A connected system as the admin named it, else its provider. */
export const systemName = ({ provider, displayName }: SystemRef): string =>
  displayName !== null && displayName !== '' ? displayName : providerName(provider);

export interface WritesEntry extends SystemRef {
  connectionId: string;
  self: boolean;
  total: number;
  counts: Readonly<Record<string, number>>;
}

/**
 * What enabling writes, one line per system that would be written to, the connection itself
 * first: "CRM B (this connection): 2 creates, 1 update".
 */
export function writeLines(writes: readonly WritesEntry[]): string[] {
  return [...writes]
    .filter((w) => w.total > 0)
    .sort((a, b) => Number(b.self) - Number(a.self) || systemName(a).localeCompare(systemName(b)))
    .map((w) => `${systemName(w)}${w.self ? ' (this connection)' : ''}: ${opCountWords(w.counts)}`);
}

/** The backfill's progress in percent, or null while the provider gave no total. */
export function backfillPercent(backfill: { seen: number; estimatedTotal: number | null }): number | null {
  const { seen, estimatedTotal } = backfill;
  if (estimatedTotal === null || estimatedTotal <= 0) return null;
  return Math.min(100, Math.max(0, Math.round((seen / estimatedTotal) * 100)));
}

/** "1 record" / "3 records". */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

export interface WaitingTargetRef extends SystemRef {
  status: string;
  reconciled: boolean;
}

/**
 * Why a connected system is owed no creates yet, as a line: "CRM A is on its first sync".
 * Creates go only to a system that is live and whose first sync is linked (reconciled).
 */
export function waitingLine(target: WaitingTargetRef): string {
  const name = systemName(target);
  switch (target.status) {
    case 'paused':
      return `${name} is paused`;
    case 'needs_reauth':
      return `${name} is waiting for its credentials`;
    case 'error':
      return `${name} is failing`;
    case 'live':
      return target.reconciled ? `${name} is live` : `${name} is finishing its first sync`;
    default:
      return `${name} is on its first sync`;
  }
}
