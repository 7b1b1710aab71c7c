import { ENTITY_TYPES, PROVIDER_KEYS } from '@syncline/core';
import { z } from 'zod';
import { MAX_PAGE_SIZE, nextCursorField } from '../admin/page-cursor';
import { actorView } from '../auth/actor-ref';

const MAX_MAPPINGS = 200;

const fieldName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'a field name: a letter, then letters, digits or _ (at most 64)')
  .describe(
    "A unified field of the type (to move it to another property) or a new custom field's name " +
      '(it carries text, and policies and record edits can name it).',
  );

const propertyName = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_-]{0,99}$/, "a property's internal name (letters, digits, _ or -)")
  .describe(
    "The provider property's internal name (HubSpot: as `GET /crm/v3/properties/{objectType}` lists it).",
  );

export const fieldMapping = z.strictObject({
  entityType: z.enum(ENTITY_TYPES),
  field: fieldName,
  property: propertyName,
});
export type FieldMappingBody = z.output<typeof fieldMapping>;

export const replaceMappingsBody = z.strictObject({
  mappings: z
    .array(fieldMapping)
    .max(MAX_MAPPINGS)
    .superRefine((mappings, ctx) => {
      const seen = new Set<string>();
      mappings.forEach((m, index) => {
        const key = `${m.entityType}.${m.field}`;
        if (seen.has(key))
          ctx.addIssue({ code: 'custom', path: [index, 'field'], message: `${key} is mapped twice` });
        seen.add(key);
      });
    })
    .describe(
      "The connection's whole set of overrides: a field left out goes back to the connector's default " +
        'property (a custom field left out is no longer read or written). Empty: the defaults only.',
    ),
});
export type ReplaceMappingsBody = z.output<typeof replaceMappingsBody>;

/** `If-Match`: the mappings' version as in `version` / `ETag` (`"3"`, `3` or `W/"3"`). */
export const mappingsIfMatch = z
  .string()
  .regex(/^(W\/)?"?\d{1,9}"?$/, "the mappings' version, as in the ETag")
  .transform((value) => Number(value.replace(/^W\//, '').replaceAll('"', '')))
  .optional();

const fieldInForce = z.object({
  field: z.string(),
  property: z
    .string()
    .describe(
      'The provider property that carries it; for a field not mapped, its default property (see `takenBy`).',
    ),
  custom: z.boolean().describe('Outside the unified vocabulary: added by a mapping, carried as text.'),
  mapped: z
    .boolean()
    .describe(
      'Read and written through `property` on this connection: true for a default field at its default ' +
        'property as for one a mapping moved; false for a default field whose property a mapping gave to ' +
        'another field (it is then neither read nor written).',
    ),
  source: z
    .enum(['default', 'mapping'])
    .describe("Where `property` comes from: the connector's default, or this connection's mappings."),
  defaultProperty: z
    .string()
    .nullable()
    .describe(
      "The connector's default property for the field (what it goes back to when its mapping is left out); null for a custom field.",
    ),
  takenBy: z
    .string()
    .optional()
    .describe('Only on a field not mapped: the field whose mapping took its default property.'),
});

export const mappingsView = z.object({
  connectionId: z.uuid(),
  provider: z.enum(PROVIDER_KEYS),
  externalAccountId: z
    .string()
    .describe('The provider account whose properties these are (HubSpot portal id).'),
  supportsMappings: z
    .boolean()
    .describe(
      'Whether the provider has properties to map (HubSpot). The Google providers have fixed fields: ' +
        'their `fields` are empty and a PUT with any mapping answers 400 `mappings_unsupported`.',
    ),
  version: z
    .number()
    .int()
    .describe('The version (also the `ETag`): 0 until the first replacement, then one more per PUT.'),
  mappings: z.array(fieldMapping).describe('The overrides in force: what a PUT replaces.'),
  fields: z
    .record(z.string(), z.array(fieldInForce))
    .describe(
      'Per entity type, every field the connection reads and writes (`mapped`) and the property that ' +
        'carries it, then any default field a mapping left without its property (`mapped: false`).',
    ),
  updatedAt: z.iso.datetime().nullable().describe('When the mappings were last replaced; null before that.'),
});
export type MappingsView = z.output<typeof mappingsView>;

export const mappingRevisionsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(50),
  cursor: z
    .string()
    .regex(/^\d{1,9}$/, 'not a cursor this API returned')
    .transform(Number)
    .describe('`nextCursor` of the previous page.')
    .optional(),
});
export type MappingRevisionsQuery = z.output<typeof mappingRevisionsQuery>;

export const mappingRevisionView = z.object({
  version: z.number().int(),
  mappings: z.array(fieldMapping).describe('The overrides as this version made them.'),
  changedBy: actorView.describe('The member or API key that replaced them.'),
  createdAt: z.iso.datetime(),
});
export type MappingRevisionView = z.output<typeof mappingRevisionView>;

export const mappingRevisionPage = z.object({
  connectionId: z.uuid(),
  externalAccountId: z.string(),
  data: z.array(mappingRevisionView),
  nextCursor: nextCursorField,
});
export type MappingRevisionPage = z.output<typeof mappingRevisionPage>;

export const propertiesQuery = z.object({
  entityType: z
    .enum(ENTITY_TYPES)
    .describe('The entity type whose provider object to list (person: contacts).'),
});
export type PropertiesQuery = z.output<typeof propertiesQuery>;

export const propertyView = z.object({
  name: z.string().describe('The internal name a mapping names.'),
  label: z.string(),
  type: z
    .string()
    .describe("HubSpot's data type: string, number, date, datetime, enumeration, bool, phone_number."),
  groupName: z.string(),
  custom: z.boolean().describe("Made by the portal's admins, not one of HubSpot's own."),
  readOnly: z.boolean().describe('HubSpot computes its value: it cannot carry a field.'),
  reserved: z
    .boolean()
    .describe(
      'Kept by HubSpot or Syncline (ids, create and modify dates) or read-only: no mapping may name it.',
    ),
});
export type PropertyView = z.output<typeof propertyView>;

export const propertyListView = z.object({
  connectionId: z.uuid(),
  externalAccountId: z.string().describe('The portal the properties are read from.'),
  entityType: z.enum(ENTITY_TYPES),
  objectType: z.string().describe("The provider's object type (HubSpot: contacts, companies, deals, …)."),
  properties: z.array(propertyView).describe('Every property of the object type in the portal, by label.'),
  fieldTypes: z
    .record(z.string(), z.array(z.string()))
    .describe('Per field the connection carries for the type, the property types that can carry it.'),
  customFieldTypes: z.array(z.string()).describe('The property types a new custom field (text) can use.'),
});
export type PropertyListView = z.output<typeof propertyListView>;
