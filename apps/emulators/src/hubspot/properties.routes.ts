import type { FastifyInstance } from 'fastify';
import { authOf } from './data-plane.hooks';
import { HubspotHttpError, notFoundError, validationError } from './errors';
import { OBJECT_TYPE_NAMES, type ObjectTypeName } from './object-types';
import type { Portal } from './portal';
import { bodyObject, objectTypeOf } from './route-helpers';

/** HubSpot's property data types (`type`), as the properties API reports them. */
export const PROPERTY_TYPES = [
  'string',
  'number',
  'date',
  'datetime',
  'enumeration',
  'bool',
  'phone_number',
] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export interface PropertyDefinition {
  name: string;
  label: string;
  type: PropertyType;
  fieldType: string;
  groupName: string;
  description: string;
  options: PropertyOption[];
  hasUniqueValue: boolean;
  hubspotDefined: boolean;
  calculated: boolean;
  externalOptions: boolean;
  hidden: boolean;
  formField: boolean;
  displayOrder: number;
  archived: boolean;
  createdAt: string;
  updatedAt: string;
  /** What a portal may change: HubSpot's own definitions are fixed, a custom one is the portal's. */
  modificationMetadata: {
    archivable: boolean;
    readOnlyDefinition: boolean;
    readOnlyValue: boolean;
    readOnlyOptions: boolean;
  };
}

export interface PropertyOption {
  label: string;
  value: string;
  displayOrder: number;
  hidden: boolean;
  description?: string;
}

/** A property group (`GET /crm/v3/properties/{objectType}/groups`): where properties are shown. */
export interface PropertyGroup {
  name: string;
  label: string;
  displayOrder: number;
  archived: boolean;
}

const FIELD_TYPE: Record<PropertyType, string> = {
  string: 'text',
  number: 'number',
  date: 'date',
  datetime: 'date',
  enumeration: 'select',
  bool: 'booleancheckbox',
  phone_number: 'phonenumber',
};

const owner = { hubspot_owner_id: 'enumeration' } as const;
const engagement = {
  hs_createdate: 'datetime',
  hs_lastmodifieddate: 'datetime',
  hs_object_id: 'number',
} as const;

/** The built-in properties the emulator declares per type (those Syncline reads and a few more). */
const BUILT_IN: Readonly<Record<ObjectTypeName, Readonly<Record<string, PropertyType>>>> = {
  contacts: {
    email: 'string',
    firstname: 'string',
    lastname: 'string',
    phone: 'phone_number',
    mobilephone: 'phone_number',
    company: 'string',
    jobtitle: 'string',
    city: 'string',
    country: 'string',
    lifecyclestage: 'enumeration',
    hs_additional_emails: 'enumeration',
    createdate: 'datetime',
    lastmodifieddate: 'datetime',
    hs_object_id: 'number',
    ...owner,
  },
  companies: {
    name: 'string',
    domain: 'string',
    website: 'string',
    phone: 'string',
    industry: 'enumeration',
    city: 'string',
    country: 'string',
    numberofemployees: 'number',
    annualrevenue: 'number',
    createdate: 'datetime',
    hs_lastmodifieddate: 'datetime',
    hs_object_id: 'number',
    ...owner,
  },
  deals: {
    dealname: 'string',
    amount: 'number',
    dealstage: 'enumeration',
    pipeline: 'enumeration',
    closedate: 'datetime',
    description: 'string',
    createdate: 'datetime',
    hs_lastmodifieddate: 'datetime',
    hs_object_id: 'number',
    ...owner,
  },
  meetings: {
    hs_meeting_title: 'string',
    hs_meeting_body: 'string',
    hs_meeting_start_time: 'datetime',
    hs_meeting_end_time: 'datetime',
    hs_meeting_location: 'string',
    hs_meeting_outcome: 'enumeration',
    hs_timestamp: 'datetime',
    ...engagement,
    ...owner,
  },
  tasks: {
    hs_task_subject: 'string',
    hs_task_body: 'string',
    hs_task_status: 'enumeration',
    hs_task_priority: 'enumeration',
    hs_timestamp: 'datetime',
    ...engagement,
    ...owner,
  },
  emails: {
    hs_email_subject: 'string',
    hs_email_text: 'string',
    hs_email_direction: 'enumeration',
    hs_email_status: 'enumeration',
    hs_timestamp: 'datetime',
    ...engagement,
    ...owner,
  },
};

const EPOCH = '2020-01-01T00:00:00.000Z';

const BUILT_IN_METADATA = {
  archivable: false,
  readOnlyDefinition: true,
  readOnlyValue: false,
  readOnlyOptions: false,
} as const;
/** A portal's own property: HubSpot offers no way to make its value read-only for users. */
const CUSTOM_METADATA = {
  archivable: true,
  readOnlyDefinition: false,
  readOnlyValue: false,
  readOnlyOptions: false,
} as const;

/** The group the emulator files its built-in properties under. */
const BUILT_IN_GROUP = 'syncline_emulator';

function definition(
  name: string,
  type: PropertyType,
  extra: Partial<PropertyDefinition> = {},
): PropertyDefinition {
  return {
    name,
    label: name,
    type,
    fieldType: FIELD_TYPE[type],
    groupName: BUILT_IN_GROUP,
    description: '',
    options: [],
    hasUniqueValue: false,
    hubspotDefined: true,
    calculated: false,
    externalOptions: false,
    hidden: false,
    formField: true,
    displayOrder: -1,
    archived: false,
    createdAt: EPOCH,
    updatedAt: EPOCH,
    modificationMetadata: BUILT_IN_METADATA,
    ...extra,
  };
}

/**
 * The groups every portal starts with, per type: the built-ins' group, a few of HubSpot's own,
 * and the ones test portals file their custom properties under as an admin would (`custom`,
 * `sales`).
 */
const DEFAULT_GROUPS: Readonly<Record<ObjectTypeName, readonly (readonly [string, string])[]>> = {
  contacts: [
    ['contactinformation', 'Contact information'],
    ['emailinformation', 'Email information'],
    ['sales_properties', 'Sales properties'],
  ],
  companies: [['companyinformation', 'Company information']],
  deals: [['dealinformation', 'Deal information']],
  meetings: [['meeting', 'Meeting information']],
  tasks: [['task', 'Task information']],
  emails: [['email', 'Email information']],
};
const SHARED_GROUPS = [
  [BUILT_IN_GROUP, 'Emulator built-ins'],
  ['custom', 'Custom properties'],
  ['sales', 'Sales'],
] as const;

/** Property groups per portal (a new portal starts with the defaults; a reset forgets the portal). */
const groupsByPortal = new WeakMap<Portal, Record<ObjectTypeName, Map<string, PropertyGroup>>>();

function groupsOf(portal: Portal): Record<ObjectTypeName, Map<string, PropertyGroup>> {
  let groups = groupsByPortal.get(portal);
  if (!groups) {
    groups = Object.fromEntries(
      OBJECT_TYPE_NAMES.map((t) => [
        t,
        new Map(
          [...SHARED_GROUPS, ...DEFAULT_GROUPS[t]].map(([name, label], displayOrder) => [
            name,
            { name, label, displayOrder, archived: false },
          ]),
        ),
      ]),
    ) as Record<ObjectTypeName, Map<string, PropertyGroup>>;
    groupsByPortal.set(portal, groups);
  }
  return groups;
}

/** Custom properties per portal (a new portal starts with none; a reset forgets the portal). */
const customByPortal = new WeakMap<Portal, Record<ObjectTypeName, Map<string, PropertyDefinition>>>();

function customOf(portal: Portal): Record<ObjectTypeName, Map<string, PropertyDefinition>> {
  let custom = customByPortal.get(portal);
  if (!custom) {
    custom = Object.fromEntries(OBJECT_TYPE_NAMES.map((t) => [t, new Map()])) as Record<
      ObjectTypeName,
      Map<string, PropertyDefinition>
    >;
    customByPortal.set(portal, custom);
  }
  return custom;
}

/** Every property of a type in this portal: built-in, the portal's unique ones (text), custom. */
export function propertiesOf(portal: Portal, type: ObjectTypeName): PropertyDefinition[] {
  const out = new Map<string, PropertyDefinition>();
  for (const [name, kind] of Object.entries(BUILT_IN[type])) out.set(name, definition(name, kind));
  for (const name of portal.settings.uniqueProperties[type] ?? [])
    if (!out.has(name))
      out.set(
        name,
        definition(name, 'string', {
          hasUniqueValue: true,
          hubspotDefined: false,
          modificationMetadata: CUSTOM_METADATA,
        }),
      );
  for (const [name, def] of customOf(portal)[type]) out.set(name, def);
  return [...out.values()];
}

const NAME = /^[a-z][a-z0-9_]{0,99}$/;

/** An enumeration's `options` as HubSpot takes them: a label and a distinct value each. */
function optionsOf(raw: unknown): PropertyOption[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw validationError('options must be an array.');
  const seen = new Set<string>();
  return raw.map((o: unknown, i): PropertyOption => {
    const option = bodyObject(o);
    const { label, value, displayOrder, hidden, description } = option;
    if (typeof label !== 'string' || label.length === 0 || typeof value !== 'string' || value.length === 0)
      throw validationError('Every option needs a label and a value.', { options: [String(i)] });
    if (seen.has(value))
      throw validationError(`Option values must be unique: ${value}.`, { options: [value] });
    seen.add(value);
    return {
      label,
      value,
      displayOrder: typeof displayOrder === 'number' ? displayOrder : i,
      hidden: hidden === true,
      ...(typeof description === 'string' ? { description } : {}),
    };
  });
}

/**
 * `GET /crm/v3/properties/{objectType}`, `GET …/{propertyName}` and `POST …` (a custom
 * property, in a group the portal has), and the groups: `GET` and `POST …/groups`,
 * `GET …/groups/{groupName}`. The emulator does not enforce the catalogue on record writes
 * (HubSpot does): it only answers what a portal declares, for callers that check mappings
 * against it.
 */
export function registerPropertyRoutes(api: FastifyInstance, now: () => number): void {
  api.get<{ Params: { objectType: string } }>('/crm/v3/properties/:objectType/groups', async (req) => {
    const { portal } = authOf(req);
    return { results: [...groupsOf(portal)[objectTypeOf(req.params.objectType).name].values()] };
  });

  api.get<{ Params: { objectType: string; groupName: string } }>(
    '/crm/v3/properties/:objectType/groups/:groupName',
    async (req) => {
      const { portal } = authOf(req);
      const found = groupsOf(portal)[objectTypeOf(req.params.objectType).name].get(req.params.groupName);
      if (!found) throw notFoundError(`Unable to find property group ${req.params.groupName}`);
      return found;
    },
  );

  api.post<{ Params: { objectType: string } }>(
    '/crm/v3/properties/:objectType/groups',
    async (req, reply) => {
      const { portal } = authOf(req);
      const groups = groupsOf(portal)[objectTypeOf(req.params.objectType).name];
      const { name, label, displayOrder } = bodyObject(req.body);
      if (typeof name !== 'string' || !NAME.test(name))
        throw validationError('Property group name must be lower case letters, digits and underscores.', {
          name: [String(name)],
        });
      if (typeof label !== 'string' || label.length === 0) throw validationError('label is required.');
      if (groups.has(name))
        throw new HubspotHttpError(409, {
          message: `A property group named '${name}' already exists.`,
          category: 'OBJECT_ALREADY_EXISTS',
        });
      const group: PropertyGroup = {
        name,
        label,
        displayOrder: typeof displayOrder === 'number' ? displayOrder : -1,
        archived: false,
      };
      groups.set(name, group);
      return reply.code(201).send(group);
    },
  );

  api.get<{ Params: { objectType: string } }>('/crm/v3/properties/:objectType', async (req) => {
    const { portal } = authOf(req);
    return { results: propertiesOf(portal, objectTypeOf(req.params.objectType).name) };
  });

  api.get<{ Params: { objectType: string; propertyName: string } }>(
    '/crm/v3/properties/:objectType/:propertyName',
    async (req) => {
      const { portal } = authOf(req);
      const found = propertiesOf(portal, objectTypeOf(req.params.objectType).name).find(
        (p) => p.name === req.params.propertyName,
      );
      if (!found) throw notFoundError(`Unable to find property ${req.params.propertyName}`);
      return found;
    },
  );

  api.post<{ Params: { objectType: string } }>('/crm/v3/properties/:objectType', async (req, reply) => {
    const { portal } = authOf(req);
    const type = objectTypeOf(req.params.objectType).name;
    const body = bodyObject(req.body);
    const { name, label, type: dataType, fieldType, groupName, description, options } = body;
    if (typeof name !== 'string' || !NAME.test(name))
      throw validationError('Property name must be lower case letters, digits and underscores.', {
        name: [String(name)],
      });
    if (typeof label !== 'string' || label.length === 0) throw validationError('label is required.');
    if (typeof groupName !== 'string' || groupName.length === 0)
      throw validationError('groupName is required.');
    if (!groupsOf(portal)[type].has(groupName))
      throw validationError(`Property group ${groupName} does not exist.`, { groupName: [groupName] });
    if (!PROPERTY_TYPES.includes(dataType as PropertyType))
      throw validationError(`type must be one of ${PROPERTY_TYPES.join(', ')}.`);
    if (propertiesOf(portal, type).some((p) => p.name === name))
      throw new HubspotHttpError(409, {
        message: `A property named '${name}' already exists.`,
        category: 'OBJECT_ALREADY_EXISTS',
      });
    const at = new Date(now()).toISOString();
    const created = definition(name, dataType as PropertyType, {
      label,
      groupName,
      fieldType: typeof fieldType === 'string' ? fieldType : FIELD_TYPE[dataType as PropertyType],
      description: typeof description === 'string' ? description : '',
      options: optionsOf(options),
      hubspotDefined: false,
      modificationMetadata: CUSTOM_METADATA,
      displayOrder: 0,
      createdAt: at,
      updatedAt: at,
    });
    customOf(portal)[type].set(name, created);
    return reply.code(201).send(created);
  });
}
