import dayjs from 'dayjs';
import { type FieldSpec, fieldSpec, type RecordType } from '../../../lib/fields';

/** How the page names each provider key (`hubspot`, `google-calendar`…); an unknown key as spelled. */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  hubspot: 'HubSpot',
  google: 'Google',
  'google-calendar': 'Google Calendar',
  'google-contacts': 'Google Contacts',
  'google-tasks': 'Google Tasks',
  gmail: 'Gmail',
  microsoft: 'Microsoft',
  'microsoft-calendar': 'Outlook Calendar',
  'microsoft-mail': 'Outlook Mail',
  'microsoft-todo': 'Microsoft To Do',
  syncline: 'Syncline',
};

export function providerName(provider: string | null | undefined): string {
  if (provider === null || provider === undefined) return 'a removed connection';
  return Object.hasOwn(PROVIDER_NAMES, provider) ? (PROVIDER_NAMES[provider] ?? provider) : provider;
}

/** The system a person opens a record in: HubSpot, Google or Microsoft for any of their products. */
export function providerFamily(provider: string | null): string {
  if (provider === null) return 'the source';
  if (provider === 'gmail' || provider.startsWith('google')) return 'Google';
  if (provider.startsWith('microsoft')) return 'Microsoft';
  return providerName(provider);
}

export const formatTime = (iso: string): string => dayjs(iso).format('D MMM YYYY, HH:mm');

export const EMPTY_VALUE = '—';

/** A field value as text, for display and accessible names. */
export function formatValue(type: RecordType, field: string, value: unknown): string {
  if (value === null || value === undefined || value === '') return EMPTY_VALUE;
  const spec = fieldSpec(type, field);
  if (spec.input === 'datetime' && typeof value === 'string' && dayjs(value).isValid())
    return formatTime(value);
  if (typeof value === 'number') return value.toLocaleString();
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
  return JSON.stringify(value);
}

/** A value as the edit input holds it (text). */
export function toInputText(spec: FieldSpec, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (spec.input === 'datetime' && typeof value === 'string' && dayjs(value).isValid())
    return dayjs(value).format('YYYY-MM-DDTHH:mm');
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/**
 * The JSON value an input's text stands for: empty clears (null); a number field sends a
 * number (the API refuses what is not one, naming the field); a time is sent in UTC.
 */
export function fromInputText(spec: FieldSpec, text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (spec.input === 'number') {
    const number = Number(trimmed.replace(/[\s,]/g, ''));
    return Number.isFinite(number) ? number : trimmed;
  }
  if (spec.input === 'datetime') {
    const time = dayjs(trimmed);
    return time.isValid() ? time.toISOString() : trimmed;
  }
  return text;
}

const RULE_WORDS: Readonly<Record<string, string>> = {
  created: 'it began this record (no existing record matched)',
  'shared-key': 'they share',
  'person-merge': 'a person merged it in Syncline',
  'provider-merge': 'it was merged in the CRM',
};

const EVIDENCE_KINDS: Readonly<Record<string, string>> = {
  email: 'the email',
  phone: 'the phone',
  domain: 'the domain',
  icaluid: 'the calendar event',
  ical: 'the calendar event',
  messageid: 'the message',
  by: 'by',
};

/** `email:ana@acme.com` → "the email ana@acme.com". */
export function evidenceWords(evidence: string): string {
  const colon = evidence.indexOf(':');
  if (colon <= 0) return evidence;
  const kind = evidence.slice(0, colon);
  const value = evidence.slice(colon + 1);
  const words = EVIDENCE_KINDS[kind.toLowerCase()];
  return words === undefined ? `${kind} ${value}` : `${words} ${value}`;
}

export interface Reason {
  rule: string;
  evidence: string[];
  score: number;
}

/** Why a system's record is part of this one, in words. */
export function reasonWords(reason: Reason | null): string {
  if (reason === null) return 'Linked before reasons were kept.';
  const rule = RULE_WORDS[reason.rule] ?? reason.rule;
  const evidence = reason.evidence.map(evidenceWords);
  if (reason.rule === 'shared-key')
    return `Linked because ${rule} ${evidence.length > 0 ? evidence.join(' and ') : 'a key'}.`;
  if (reason.rule === 'created') return `Linked because ${rule}.`;
  return `Linked because ${rule}${evidence.length > 0 ? ` (${evidence.join(', ')})` : ''}.`;
}

export function linkedBecauseWords(
  because: (Reason & { joinedBy?: (Reason & { operationId: string })[] | undefined }) | null,
): string {
  const first = reasonWords(because);
  const joins = because?.joinedBy ?? [];
  if (joins.length === 0) return first;
  const merges = joins.map((join) =>
    reasonWords(join)
      .replace(/^Linked because /, '')
      .replace(/\.$/, ''),
  );
  return `${first} Then moved here by a merge: ${merges.join('; then ')}.`;
}

export const TYPE_LABEL: Readonly<Record<RecordType, string>> = {
  person: 'Person',
  company: 'Company',
  deal: 'Deal',
};

/** A light callout's title in the text colour: the tone's own shade is too faint on its tint (WCAG AA). */
export const CALLOUT_STYLES = { title: { color: 'var(--mantine-color-text)' } } as const;
