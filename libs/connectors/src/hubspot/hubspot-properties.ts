import { type EntityType, isUnifiedField, ok } from '@syncline/core';
import type { ConnectionContext, ConnectorResult, FieldMappings } from '../contract/connector';
import { OBJECT_SPECS, type ObjectSpec, specsFor } from './hubspot.mapper';
import { HubspotSession } from './hubspot-session';

/** A property of a portal as its properties API describes it. */
export interface HubspotProperty {
  name: string;
  label: string;
  /** HubSpot's data type: string, number, date, datetime, enumeration, bool, phone_number. */
  type: string;
}

/** One unified field of a connection and the property that carries it. */
export interface MappedField {
  field: string;
  property: string;
  /** Outside the unified vocabulary: added by a mapping, carried as text. */
  custom: boolean;
  /** A mapping of this connection put it there (otherwise it is the connector's default). */
  mapped: boolean;
}

/** The entity types HubSpot carries, with their object type. */
export const HUBSPOT_OBJECT_TYPES: Readonly<Partial<Record<EntityType, string>>> = Object.fromEntries(
  OBJECT_SPECS.map((spec) => [spec.entityType, spec.objectType]),
);

/** Every field of every type under these mappings (`specsFor`), in the connector's order. */
export function hubspotFieldMap(mappings: FieldMappings): Partial<Record<EntityType, MappedField[]>> {
  const specs = specsFor(mappings);
  return Object.fromEntries(
    specs.map((spec) => [
      spec.entityType,
      Object.entries(spec.fields).map(([field, [property]]) => ({
        field,
        property,
        custom: !isUnifiedField(spec.entityType, field),
        mapped: Object.hasOwn(mappings, `${spec.entityType}.${field}`),
      })),
    ]),
  );
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
  return ok(page.value.results.map((p) => ({ name: p.name, label: p.label, type: p.type })));
}
