import { type EntityType, isUnifiedField, UNIFIED_FIELDS } from '@syncline/core';

/**
 * The unified fields whose values are lists, the only ones `union` may merge. The merge
 * would turn any other value into a list (a string becomes `["…"]`), which no provider takes
 * back. policy-fields.spec.ts checks this list against the vocabulary's descriptions.
 */
export const LIST_VALUED_FIELDS = {
  person: [],
  company: [],
  deal: [],
  meeting: ['attendees'],
  email_activity: ['to', 'cc', 'labelIds'],
  task: [],
} as const satisfies Record<EntityType, readonly string[]>;

export const isListValued = (entityType: EntityType, field: string): boolean =>
  (LIST_VALUED_FIELDS[entityType] as readonly string[]).includes(field);

/** The unified field names of a type, in the vocabulary's order. */
export const unifiedFieldsOf = (entityType: EntityType): string[] => Object.keys(UNIFIED_FIELDS[entityType]);

/**
 * Custom fields of a type: those that a connection's field mappings
 * (`<entity type>.<field>` → provider property) add outside the unified vocabulary. They
 * carry text, so they are never list-valued.
 */
export function customFieldsOf(entityType: EntityType, mappings: readonly unknown[]): Set<string> {
  const prefix = `${entityType}.`;
  const fields = new Set<string>();
  for (const mapping of mappings) {
    if (typeof mapping !== 'object' || mapping === null || Array.isArray(mapping)) continue;
    for (const key of Object.keys(mapping)) {
      const field = key.slice(prefix.length);
      if (key.startsWith(prefix) && field.length > 0 && !isUnifiedField(entityType, field)) fields.add(field);
    }
  }
  return fields;
}
