/** A mapping as the API takes it: `<entityType>.<field>` carried by a provider property. */
export interface Mapping {
  entityType: string;
  field: string;
  property: string;
}

/** A field in force as the API describes it (GET …/mappings `fields`). */
export interface FieldState {
  field: string;
  property: string;
  custom: boolean;
  mapped: boolean;
  defaultProperty: string | null;
  takenBy?: string;
}

/** One row of the mappings table: a field, the property the draft gives it, and what it was saved as. */
export interface MappingRow {
  key: string;
  entityType: string;
  field: string;
  property: string;
  defaultProperty: string | null;
  custom: boolean;
  /** Not carried as saved: a mapping took its default property (`takenBy`). */
  carried: boolean;
  takenBy: string | null;
  /** Added in this draft, not saved yet. */
  added: boolean;
  /** Its property differs from what is saved. */
  changed: boolean;
}

export const mappingKey = (m: { entityType: string; field: string }): string => `${m.entityType}.${m.field}`;

const sorted = (mappings: readonly Mapping[]): Mapping[] =>
  [...mappings].sort((a, b) => mappingKey(a).localeCompare(mappingKey(b)));

/**
 * Gives a field a property. A unified field given its default property needs no mapping, so
 * its override goes; any other choice (and every custom field) is an override.
 */
export function setProperty(
  draft: readonly Mapping[],
  row: { entityType: string; field: string; defaultProperty: string | null },
  property: string,
): Mapping[] {
  const key = mappingKey(row);
  const rest = draft.filter((m) => mappingKey(m) !== key);
  if (row.defaultProperty !== null && property === row.defaultProperty) return sorted(rest);
  return sorted([...rest, { entityType: row.entityType, field: row.field, property }]);
}

/** Drops a field's override: a unified field goes back to its default property, a custom field goes. */
export const removeMapping = (draft: readonly Mapping[], key: string): Mapping[] =>
  draft.filter((m) => mappingKey(m) !== key);

/** Whether the draft differs from the saved mappings (order aside). */
export function isDirty(draft: readonly Mapping[], saved: readonly Mapping[]): boolean {
  const a = sorted(draft);
  const b = sorted(saved);
  return (
    a.length !== b.length ||
    a.some((m, i) => mappingKey(m) !== mappingKey(b[i] as Mapping) || m.property !== b[i]?.property)
  );
}

/**
 * The rows of one entity type: every field the API says is in force (in its order), with the
 * draft's property, then the custom fields the draft adds. A saved custom field the draft
 * removed is left out (the draft is then dirty).
 */
export function rowsOf(
  entityType: string,
  fields: readonly FieldState[],
  draft: readonly Mapping[],
  saved: readonly Mapping[],
): MappingRow[] {
  const draftByKey = new Map(draft.map((m) => [mappingKey(m), m.property]));
  const savedByKey = new Map(saved.map((m) => [mappingKey(m), m.property]));
  const seen = new Set<string>();
  const rows: MappingRow[] = [];
  for (const f of fields) {
    const key = mappingKey({ entityType, field: f.field });
    if (seen.has(key)) continue;
    seen.add(key);
    const override = draftByKey.get(key);
    if (f.custom && override === undefined) continue;
    const savedProperty = savedByKey.get(key) ?? f.defaultProperty ?? f.property;
    const property = override ?? f.defaultProperty ?? f.property;
    rows.push({
      key,
      entityType,
      field: f.field,
      property,
      defaultProperty: f.defaultProperty,
      custom: f.custom,
      carried: f.mapped,
      takenBy: f.takenBy ?? null,
      added: false,
      changed: property !== savedProperty,
    });
  }
  for (const m of draft) {
    const key = mappingKey(m);
    if (m.entityType !== entityType || seen.has(key)) continue;
    rows.push({
      key,
      entityType,
      field: m.field,
      property: m.property,
      defaultProperty: null,
      custom: true,
      carried: true,
      takenBy: null,
      added: true,
      changed: true,
    });
  }
  return rows;
}

const ENTITY = '(person|company|deal|meeting|email_activity|task)';

/**
 * Which rows a 400 names, with what it says of each. The API joins its problems with "; " and
 * starts each with the mapping it is about: `person.leadScore: …`, `person.a and person.b all map
 * to …`, or, for the request's shape, `mappings.2.field: …` (an index into what was sent).
 */
export function problemsByRow(message: string, sent: readonly Mapping[]): Map<string, string> {
  const problems = new Map<string, string>();
  const add = (key: string, text: string) =>
    problems.set(key, problems.has(key) ? `${problems.get(key)}; ${text}` : text);
  const body = message.replace(/^invalid request:\s*/, '');
  for (const segment of body.split('; ')) {
    const text = segment.trim();
    if (text === '') continue;
    const indexed = /^(?:body\.)?mappings\.(\d+)(?:\.(\w+))?:\s*(.*)$/.exec(text);
    if (indexed) {
      const m = sent[Number(indexed[1])];
      if (m !== undefined) add(mappingKey(m), indexed[3] || text);
      continue;
    }
    for (const match of text.matchAll(new RegExp(`\\b${ENTITY}\\.([A-Za-z][A-Za-z0-9_]*)\\b`, 'g'))) {
      const key = `${match[1]}.${match[2]}`;
      if (sent.some((m) => mappingKey(m) === key)) add(key, text.replace(new RegExp(`^${key}:\\s*`), ''));
    }
  }
  return problems;
}

/** A new custom field's name as the API takes it: a letter, then letters, digits or _ (at most 64). */
export const CUSTOM_FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
