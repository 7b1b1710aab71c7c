import type { EntityType } from '@syncline/core';
import type { CountryCode } from 'libphonenumber-js';
import {
  companyNameTokens,
  isFreeMailDomain,
  nameTokens,
  normaliseEmail,
  normaliseICalUid,
  normaliseMessageId,
  normalisePhone,
  registrableDomain,
} from './normalise';

/** Kinds of deterministic key, as stored in `match_key.kind`. */
export const MATCH_KEY_KINDS = ['email', 'ical_uid', 'message_id', 'domain', 'phone'] as const;
export type MatchKeyKind = (typeof MATCH_KEY_KINDS)[number];

export interface MatchKey {
  kind: MatchKeyKind;
  value: string;
}

/** Per-workspace identity settings. */
export interface IdentitySettings {
  /** Strip `+tag` from email local parts before matching. */
  plusAddressing: boolean;
  /** Ignore dots in Gmail local parts. */
  gmailDots: boolean;
  /** Country assumed for phone numbers written without a country code. */
  defaultCountry: CountryCode | undefined;
  /** A calendar attendee or mail participant with no known person: make one, or keep the bare address. */
  participants: 'create-person' | 'bare-address';
  /** Fuzzy score at or above which a record links to an existing entity. */
  linkThreshold: number;
  /** Fuzzy score at or above which a new entity is flagged as a possible duplicate. */
  reviewThreshold: number;
}

export const DEFAULT_SETTINGS: IdentitySettings = {
  plusAddressing: false,
  gmailDots: false,
  defaultCountry: undefined,
  participants: 'create-person',
  linkThreshold: 0.9,
  reviewThreshold: 0.78,
};

/**
 * What matching needs from one source record, normalised. Keys and blocks are encoded as
 * `kind:value` strings: the index stores them as map keys as they are.
 */
export interface MatchRecord {
  entityType: EntityType;
  /** Deterministic keys (`email:ana@x.com`), strongest kind first. */
  keys: string[];
  /** Blocking keys for fuzzy candidates (`name:ana|lima`, `org:acme.com|lima`, `local:ana.lima`). */
  blocks: string[];
  /** Normalised name tokens joined by single spaces; empty when the record has no name. */
  name: string;
  /** A readable name for `entity.display_name`. */
  displayName: string | undefined;
}

export const encodeKey = (kind: MatchKeyKind, value: string): string => `${kind}:${value}`;

export function decodeKey(key: string): MatchKey {
  const colon = key.indexOf(':');
  return { kind: key.slice(0, colon) as MatchKeyKind, value: key.slice(colon + 1) };
}

const KIND_RANK: Record<string, number> = { email: 0, ical_uid: 1, message_id: 2, domain: 3, phone: 4 };
export const keyRank = (key: string): number => KIND_RANK[key.slice(0, key.indexOf(':'))] ?? 9;

const list = (value: unknown): unknown[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];

/** Email addresses in a field that holds a string, an array, or `{ email }` objects. */
export function emailsIn(value: unknown, settings: Pick<IdentitySettings, 'plusAddressing' | 'gmailDots'>) {
  const out: string[] = [];
  for (const item of list(value)) {
    const raw = typeof item === 'object' && item !== null ? (item as { email?: unknown }).email : item;
    const email = normaliseEmail(raw, settings);
    if (email && !out.includes(email)) out.push(email);
  }
  return out;
}

const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() ? value.trim() : undefined;

/**
 * Unified field names read here (the unified entity types are not settled yet, so every
 * field name identity depends on is in this one function):
 * - person: `email`, `emails[]`, `phone`, `phones[]`, `firstName`, `lastName`, `name`,
 *   `company` (name), `companyDomain`
 * - company: `domain`, `domains[]`, `website`, `name`
 * - meeting: `iCalUID`; email_activity: `messageId`
 * - deal, task: no keys; they are identified by their source link alone.
 */
export function toMatchRecord(
  entityType: EntityType,
  fields: Record<string, unknown>,
  settings: IdentitySettings = DEFAULT_SETTINGS,
): MatchRecord {
  switch (entityType) {
    case 'person':
      return personRecord(fields, settings);
    case 'company':
      return companyRecord(fields);
    case 'meeting': {
      const uid = normaliseICalUid(fields.iCalUID ?? fields.icalUid);
      return bare(entityType, uid ? [encodeKey('ical_uid', uid)] : [], str(fields.title));
    }
    case 'email_activity': {
      const id = normaliseMessageId(fields.messageId);
      return bare(entityType, id ? [encodeKey('message_id', id)] : [], str(fields.subject));
    }
    default:
      return bare(entityType, [], str(fields.name) ?? str(fields.title));
  }
}

const bare = (entityType: EntityType, keys: string[], displayName: string | undefined): MatchRecord => ({
  entityType,
  keys,
  blocks: [],
  name: '',
  displayName,
});

function personRecord(fields: Record<string, unknown>, settings: IdentitySettings): MatchRecord {
  const emails = emailsIn([...list(fields.email), ...list(fields.emails)], settings);
  const phones: string[] = [];
  for (const raw of [...list(fields.phone), ...list(fields.phones)]) {
    const phone = normalisePhone(raw, settings.defaultCountry);
    if (phone && !phones.includes(phone)) phones.push(phone);
  }
  const first = str(fields.firstName);
  const last = str(fields.lastName);
  const rawName = first || last ? [first, last].filter(Boolean).join(' ') : str(fields.name);
  const tokens = nameTokens(rawName);
  const keys = [...emails.map((e) => encodeKey('email', e)), ...phones.map((p) => encodeKey('phone', p))];
  // Blocks pair a piece of evidence with one name token, so a typo or a swap in the name
  // still meets the other token, and no block grows with the size of a company.
  const blocks = new Set<string>();
  const ends = tokens.length >= 2 ? [tokens[0]!, tokens[tokens.length - 1]!] : tokens;
  if (ends.length === 2) blocks.add(`name:${[...ends].sort().join('|')}`);
  const orgs = new Set<string>();
  const companyDomain = registrableDomain(fields.companyDomain);
  if (companyDomain) orgs.add(companyDomain);
  for (const email of emails) {
    const at = email.lastIndexOf('@');
    const domain = registrableDomain(email.slice(at + 1));
    if (domain && !isFreeMailDomain(domain)) {
      orgs.add(domain);
      continue;
    }
    // A personal handle reused across free-mail providers is evidence; a work address's local
    // part is made from the name (`ana.lima@`), and short ones (`ana@`) say too little.
    const local = email.slice(0, at);
    if (local.length >= 6) blocks.add(`local:${local}`);
  }
  const company = companyNameTokens(fields.company).join(' ');
  for (const token of ends) {
    for (const org of orgs) blocks.add(`org:${org}|${token}`);
    if (company) blocks.add(`company:${company}|${token}`);
  }
  return {
    entityType: 'person',
    keys,
    blocks: [...blocks],
    name: tokens.join(' '),
    displayName: rawName ?? emails[0],
  };
}

function companyRecord(fields: Record<string, unknown>): MatchRecord {
  const domains = new Set<string>();
  for (const raw of [...list(fields.domain), ...list(fields.domains), ...list(fields.website)]) {
    const domain = registrableDomain(raw);
    if (domain && !isFreeMailDomain(domain)) domains.add(domain);
  }
  const tokens = companyNameTokens(fields.name);
  const blocks = tokens.length > 0 ? [`name:${tokens[0]}`] : [];
  return {
    entityType: 'company',
    keys: [...domains].map((d) => encodeKey('domain', d)),
    blocks,
    name: tokens.join(' '),
    displayName: str(fields.name) ?? [...domains][0],
  };
}
