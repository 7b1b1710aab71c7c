/** The CRM object types the emulator serves, and what differs between them in HubSpot. */
export const OBJECT_TYPE_NAMES = ['contacts', 'companies', 'deals', 'meetings', 'tasks', 'emails'] as const;
export type ObjectTypeName = (typeof OBJECT_TYPE_NAMES)[number];

export interface ObjectTypeDef {
  name: ObjectTypeName;
  /** As in webhook subscription types (`contact.creation`) and association names. */
  singular: string;
  /** HubSpot's object type id (`0-1`), accepted wherever a type name is. */
  typeId: string;
  createdProperty: string;
  /** Contacts use `lastmodifieddate`, every other type `hs_lastmodifieddate` (!). */
  modifiedProperty: string;
  /** Returned when a request names no properties. */
  defaultProperties: readonly string[];
  /** Unique by HubSpot itself; portals may declare more. */
  builtInUniqueProperties: readonly string[];
  /** Matched by the free-text `query` of a search. */
  queryProperties: readonly string[];
  /** Legacy webhook subscriptions exist only for these. */
  webhooks: boolean;
}

const engagement = (
  name: ObjectTypeName,
  singular: string,
  typeId: string,
  extra: readonly string[],
): ObjectTypeDef => ({
  name,
  singular,
  typeId,
  createdProperty: 'hs_createdate',
  modifiedProperty: 'hs_lastmodifieddate',
  defaultProperties: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  builtInUniqueProperties: [],
  queryProperties: extra,
  webhooks: false,
});

export const OBJECT_TYPES: Readonly<Record<ObjectTypeName, ObjectTypeDef>> = {
  contacts: {
    name: 'contacts',
    singular: 'contact',
    typeId: '0-1',
    createdProperty: 'createdate',
    modifiedProperty: 'lastmodifieddate',
    defaultProperties: ['createdate', 'email', 'firstname', 'hs_object_id', 'lastmodifieddate', 'lastname'],
    builtInUniqueProperties: ['email'],
    queryProperties: ['firstname', 'lastname', 'email', 'phone', 'company', 'hs_additional_emails'],
    webhooks: true,
  },
  companies: {
    name: 'companies',
    singular: 'company',
    typeId: '0-2',
    createdProperty: 'createdate',
    modifiedProperty: 'hs_lastmodifieddate',
    defaultProperties: ['createdate', 'domain', 'hs_lastmodifieddate', 'hs_object_id', 'name'],
    builtInUniqueProperties: [],
    queryProperties: ['name', 'domain', 'website', 'phone'],
    webhooks: true,
  },
  deals: {
    name: 'deals',
    singular: 'deal',
    typeId: '0-3',
    createdProperty: 'createdate',
    modifiedProperty: 'hs_lastmodifieddate',
    defaultProperties: [
      'amount',
      'closedate',
      'createdate',
      'dealname',
      'dealstage',
      'hs_lastmodifieddate',
      'hs_object_id',
      'pipeline',
    ],
    builtInUniqueProperties: [],
    queryProperties: ['dealname'],
    webhooks: true,
  },
  meetings: engagement('meetings', 'meeting', '0-47', ['hs_meeting_title', 'hs_meeting_body']),
  tasks: engagement('tasks', 'task', '0-27', ['hs_task_subject', 'hs_task_body']),
  emails: engagement('emails', 'email', '0-49', ['hs_email_subject', 'hs_email_text']),
};

const ALIASES = new Map<string, ObjectTypeDef>();
for (const def of Object.values(OBJECT_TYPES)) {
  for (const alias of [def.name, def.singular, def.typeId]) ALIASES.set(alias.toLowerCase(), def);
}

/** `contacts`, `contact`, `CONTACT` and `0-1` all name the same type, as in HubSpot's paths. */
export function resolveObjectType(segment: string): ObjectTypeDef | undefined {
  return ALIASES.get(segment.toLowerCase());
}

/** Properties HubSpot maintains itself; writes to them are ignored, and they never fire propertyChange. */
export function isSystemProperty(def: ObjectTypeDef, property: string): boolean {
  return (
    property === 'hs_object_id' ||
    property === def.createdProperty ||
    property === def.modifiedProperty ||
    property === 'hs_merged_object_ids'
  );
}
