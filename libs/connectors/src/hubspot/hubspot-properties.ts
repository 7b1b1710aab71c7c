import { type EntityType, err, isUnifiedField, ok } from '@syncline/core';
import type { ConnectionContext, ConnectorResult, FieldMappings } from '../contract/connector';
import { isSynclineProperty, OBJECT_SPECS, type ObjectSpec, specOfEntity, specsFor } from './hubspot.mapper';
import { HubspotSession } from './hubspot-session';

/** A property of a portal as its properties API describes it. */
export interface HubspotProperty {
  name: string;
  label: string;
  /** HubSpot's data type: string, number, date, datetime, enumeration, bool, phone_number. */
  type: string;
  /** The property group it is shown under in HubSpot. */
  groupName: string;
  /** Made by the portal (not one of HubSpot's own). */
  custom: boolean;
  /** HubSpot computes its value: nothing can write it. */
  readOnly: boolean;
}

/** One field of a connection: the property that carries it, and whether it is carried at all. */
export interface MappedField {
  field: string;
  /** The property that carries it; for a field not mapped, its default property (now another field's). */
  property: string;
  /** Outside the unified vocabulary: added by a mapping, carried as text. */
  custom: boolean;
  /** Read and written through `property` on this connection (a default field at its default property is). */
  mapped: boolean;
  /** Where `property` comes from: the connector's default, or a mapping of this connection. */
  source: 'default' | 'mapping';
  /** A default field not mapped: the field whose mapping took its property. */
  takenBy?: string;
}

/** The entity types HubSpot carries, with their object type. */
export const HUBSPOT_OBJECT_TYPES: Readonly<Partial<Record<EntityType, string>>> = Object.fromEntries(
  OBJECT_SPECS.map((spec) => [spec.entityType, spec.objectType]),
);

/**
 * Every field of every type under these mappings (`specsFor`), in the connector's order: each
 * one the connection carries, mapped, then each default field a mapping took the property of,
 * not mapped (the connector drops it: a property carries one field).
 */
export function hubspotFieldMap(mappings: FieldMappings): Partial<Record<EntityType, MappedField[]>> {
  return Object.fromEntries(
    specsFor(mappings).map((spec) => {
      const carried = Object.entries(spec.fields).map(
        ([field, [property]]): MappedField => ({
          field,
          property,
          custom: !isUnifiedField(spec.entityType, field),
          mapped: true,
          source: Object.hasOwn(mappings, `${spec.entityType}.${field}`) ? 'mapping' : 'default',
        }),
      );
      const defaults = specOfEntity(spec.entityType)?.fields ?? {};
      const dropped = Object.entries(defaults)
        .filter(([field]) => !Object.hasOwn(spec.fields, field))
        .map(([field, [property]]): MappedField => {
          const takenBy = carried.find((c) => c.property === property)?.field;
          return {
            field,
            property,
            custom: false,
            mapped: false,
            source: 'default',
            ...(takenBy === undefined ? {} : { takenBy }),
          };
        });
      return [spec.entityType, [...carried, ...dropped]];
    }),
  );
}

/**
 * What the connector itself refuses of a connection's field mappings: a mapping onto one of the
 * properties Syncline owns (`syncline_id`, the activity insights: every `syncline_` property).
 * Syncline writes those and never reads them back; carried as a field, an insight would come
 * back as the record's own edit on every write. `Validation`, naming every mapping at fault.
 */
export function checkHubspotFieldMappings(mappings: FieldMappings): ConnectorResult<void> {
  const refused = Object.entries(mappings).filter(([, property]) => isSynclineProperty(property));
  if (refused.length === 0) return ok(undefined);
  return err({
    code: 'Validation',
    message: `${refused
      .map(([key, property]) => `${key}: ${property}`)
      .join(
        '; ',
      )}: properties named syncline_ are Syncline's own (written by Syncline, never read) and cannot carry a field`,
  });
}

/**
 * The HubSpot data types that can carry a unified field: a number needs a number property, a
 * time a date or datetime one; text (a custom field, most defaults) goes into text, phone or
 * enumeration properties (an enumeration's options are HubSpot's to check on write); the
 * translated enumerations (task priority, email status, …) into enumerations or text.
 */
export function propertyTypesFor(entityType: EntityType, field: string): readonly string[] {
  const spec: ObjectSpec | undefined = OBJECT_SPECS.find((s) => s.entityType === entityType);
  const kind = spec?.fields[field]?.[1] ?? 'string';
  switch (kind) {
    case 'number':
      return ['number'];
    case 'datetime':
      return ['datetime', 'date'];
    case 'string':
      return ['string', 'phone_number', 'enumeration'];
    default:
      return ['enumeration', 'string'];
  }
}

/** Every property of an object type in the connection's portal (the official SDK's properties API). */
export async function listHubspotProperties(
  ctx: ConnectionContext,
  objectType: string,
): Promise<ConnectorResult<HubspotProperty[]>> {
  const session = new HubspotSession(ctx);
  const page = await session.call('default', (client) => client.crm.properties.coreApi.getAll(objectType));
  if (!page.ok) return page;
  return ok(
    page.value.results.map((p) => ({
      name: p.name,
      label: p.label,
      type: p.type,
      groupName: p.groupName,
      custom: p.hubspotDefined !== true,
      readOnly: p.calculated === true || p.modificationMetadata?.readOnlyValue === true,
    })),
  );
}
