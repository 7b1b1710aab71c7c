import type { EntityType } from '@syncline/core';
import type { InsightValues } from '../contract/connector';
import { type HubspotObjectType, toHubspotValue } from './hubspot.mapper';

/** The property group Syncline files its insight properties under, on every object type that has them. */
export const INSIGHT_PROPERTY_GROUP = {
  name: 'syncline',
  label: 'Syncline activity (computed)',
  displayOrder: -1,
} as const;

/** The object types that carry insight properties, by the entity type they hold. */
export const INSIGHT_OBJECT_TYPES: Readonly<Partial<Record<EntityType, HubspotObjectType>>> = {
  person: 'contacts',
  company: 'companies',
  deal: 'deals',
};

/** One property Syncline owns in a portal, as the properties API creates it. */
export interface InsightPropertyDefinition {
  name: string;
  label: string;
  description: string;
  type: 'datetime' | 'enumeration' | 'number';
  /** HubSpot's form control: a datetime is shown as `date`. */
  fieldType: 'date' | 'select' | 'number';
  options?: readonly { value: string; label: string }[];
  /** The InsightValues member it carries. */
  carries: keyof InsightValues;
}

const OVERWRITTEN =
  'Computed by Syncline from mail and calendar activity; edits made in HubSpot are overwritten by Syncline.';

/**
 * The activity-insight properties Syncline creates and owns on contacts, companies and deals
 * (see ensureInsightProperties). HubSpot's API cannot make a custom property read-only for
 * users (`modificationMetadata.readOnlyValue` is HubSpot's own, never settable), so labels and
 * descriptions say where the values come from and that edits are overwritten. Syncline never
 * reads them back: they are not in the mapper's read set (requestedProperties), a webhook
 * propertyChange for one maps to no field and is dropped, and no field mapping may name a
 * `syncline_` property (checkHubspotFieldMappings; specsFor ignores one that slipped through).
 */
export const INSIGHT_PROPERTIES: readonly InsightPropertyDefinition[] = [
  {
    name: 'syncline_last_contacted',
    label: 'Last contacted (Syncline)',
    description: `When mail or a meeting last went between us and them. ${OVERWRITTEN}`,
    type: 'datetime',
    fieldType: 'date',
    carries: 'lastContactedAt',
  },
  {
    name: 'syncline_last_contacted_via',
    label: 'Last contacted via (Syncline)',
    description: `How they were last in contact: mail from them, mail to them or a meeting. ${OVERWRITTEN}`,
    type: 'enumeration',
    fieldType: 'select',
    options: [
      { value: 'mail_in', label: 'Mail from them' },
      { value: 'mail_out', label: 'Mail to them' },
      { value: 'meeting', label: 'Meeting' },
    ],
    carries: 'lastContactedVia',
  },
  {
    name: 'syncline_next_meeting',
    label: 'Next meeting (Syncline)',
    description: `When the next meeting with them starts. ${OVERWRITTEN}`,
    type: 'datetime',
    fieldType: 'date',
    carries: 'nextMeetingAt',
  },
  {
    name: 'syncline_mails_in_30d',
    label: 'Mails from them, last 30 days (Syncline)',
    description: `Mails received from them in the last 30 days. ${OVERWRITTEN}`,
    type: 'number',
    fieldType: 'number',
    carries: 'mailsIn30',
  },
  {
    name: 'syncline_mails_out_30d',
    label: 'Mails to them, last 30 days (Syncline)',
    description: `Mails sent to them in the last 30 days. ${OVERWRITTEN}`,
    type: 'number',
    fieldType: 'number',
    carries: 'mailsOut30',
  },
  {
    name: 'syncline_meetings_30d',
    label: 'Meetings, last 30 days (Syncline)',
    description: `Meetings held with them in the last 30 days. ${OVERWRITTEN}`,
    type: 'number',
    fieldType: 'number',
    carries: 'meetings30',
  },
  {
    name: 'syncline_engagement_7d',
    label: 'Mails and meetings, last 7 days (Syncline)',
    description: `Mails from and to them and meetings held with them in the last 7 days. ${OVERWRITTEN}`,
    type: 'number',
    fieldType: 'number',
    carries: 'engagement7',
  },
  {
    name: 'syncline_engagement_90d',
    label: 'Mails and meetings, last 90 days (Syncline)',
    description: `Mails from and to them and meetings held with them in the last 90 days. ${OVERWRITTEN}`,
    type: 'number',
    fieldType: 'number',
    carries: 'engagement90',
  },
  {
    name: 'syncline_engagement_trend',
    label: 'Engagement trend (Syncline)',
    description: `Whether contact with them is warming, steady, cooling or has gone cold. ${OVERWRITTEN}`,
    type: 'enumeration',
    fieldType: 'select',
    options: [
      { value: 'warming', label: 'Warming' },
      { value: 'steady', label: 'Steady' },
      { value: 'cooling', label: 'Cooling' },
      { value: 'cold', label: 'Cold' },
    ],
    carries: 'trend',
  },
];

/** Why these values cannot be written as they are; undefined when they can. */
export function insightValuesProblem(values: InsightValues): string | undefined {
  for (const p of INSIGHT_PROPERTIES) {
    const value = values[p.carries];
    if (p.type === 'number') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
        return `${p.carries} must be a whole number of 0 or more (was ${String(value)})`;
    } else if (value === null) {
      if (p.carries === 'trend') return 'trend must be given';
    } else if (p.type === 'datetime') {
      if (typeof value !== 'string' || !Number.isFinite(Date.parse(value)))
        return `${p.carries} must be an ISO instant or null (was ${String(value)})`;
    } else if (!p.options?.some((o) => o.value === value)) {
      return `${p.carries} must be one of ${p.options?.map((o) => o.value).join(', ')} (was ${String(value)})`;
    }
  }
  return undefined;
}

/**
 * Pure: InsightValues → HubSpot property values, strings as HubSpot takes them. Datetimes are
 * written as the mapper writes every datetime (ISO-8601 in milliseconds, UTC); null → '' clears.
 */
export function toHubspotInsightProperties(values: InsightValues): Record<string, string> {
  return Object.fromEntries(
    INSIGHT_PROPERTIES.map((p) => {
      const value = values[p.carries];
      return [
        p.name,
        p.type === 'datetime' ? toHubspotValue(value, 'datetime') : toHubspotValue(value, 'string'),
      ];
    }),
  );
}
