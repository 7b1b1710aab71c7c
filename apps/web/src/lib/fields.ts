/**
 * How the web app shows and edits each unified field of the record types it has pages for:
 * a label and an input kind. Only presentation lives here; what a value may be is the API's
 * to decide (it answers 400 naming the field). Tested against core's UNIFIED_FIELDS.
 */
export const RECORD_TYPES = ['person', 'company', 'deal'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** The input a field is edited with; `suggest` is free text with known values offered. */
export type FieldInput = 'text' | 'email' | 'tel' | 'number' | 'datetime' | 'suggest';

export interface FieldSpec {
  readonly label: string;
  readonly input: FieldInput;
  /** For `suggest`: the spellings the vocabulary lists (a custom value is still allowed). */
  readonly suggestions?: readonly string[];
}

const LIFECYCLE_STAGES = [
  'subscriber',
  'lead',
  'marketingqualifiedlead',
  'salesqualifiedlead',
  'opportunity',
  'customer',
  'evangelist',
  'other',
] as const;

/** In display order, per type. */
export const FIELDS = {
  person: {
    firstName: { label: 'First name', input: 'text' },
    lastName: { label: 'Last name', input: 'text' },
    email: { label: 'Email', input: 'email' },
    phone: { label: 'Phone', input: 'tel' },
    company: { label: 'Company (as written)', input: 'text' },
    jobTitle: { label: 'Job title', input: 'text' },
    lifecycleStage: { label: 'Lifecycle stage', input: 'suggest', suggestions: LIFECYCLE_STAGES },
    ownerId: { label: 'Owner', input: 'text' },
  },
  company: {
    name: { label: 'Name', input: 'text' },
    domain: { label: 'Domain', input: 'text' },
    phone: { label: 'Phone', input: 'tel' },
    industry: { label: 'Industry', input: 'text' },
    city: { label: 'City', input: 'text' },
    country: { label: 'Country', input: 'text' },
    ownerId: { label: 'Owner', input: 'text' },
  },
  deal: {
    name: { label: 'Name', input: 'text' },
    amount: { label: 'Amount', input: 'number' },
    stage: { label: 'Stage', input: 'text' },
    pipeline: { label: 'Pipeline', input: 'text' },
    closeDate: { label: 'Close date', input: 'datetime' },
    ownerId: { label: 'Owner', input: 'text' },
  },
} as const satisfies Record<RecordType, Record<string, FieldSpec>>;

/** The unified fields of a type, in display order. */
export function fieldsOf(type: RecordType): [name: string, spec: FieldSpec][] {
  return Object.entries(FIELDS[type]);
}

/** A field's label; a custom (mapped) field outside the vocabulary is shown by its name. */
export function fieldLabel(type: RecordType, field: string): string {
  const specs: Readonly<Record<string, FieldSpec | undefined>> = FIELDS[type];
  return (Object.hasOwn(specs, field) ? specs[field]?.label : undefined) ?? field;
}

/** A field's spec; a custom field is free text. */
export function fieldSpec(type: RecordType, field: string): FieldSpec {
  const specs: Readonly<Record<string, FieldSpec | undefined>> = FIELDS[type];
  return (Object.hasOwn(specs, field) ? specs[field] : undefined) ?? { label: field, input: 'text' };
}

/** Whether `field` is one of the type's unified fields (not a mapping's custom field). */
export function isUnifiedFieldOf(type: RecordType, field: string): boolean {
  return Object.hasOwn(FIELDS[type], field);
}
