import type { EntityType } from '@syncline/core';
import type { CountryCode } from 'libphonenumber-js';
import {
  companyNameTokens,
  countryCallingCodes,
  isFreeMailDomain,
  nameTokens,
  nationalDigitsOf,
  nationalPhoneDigits,
  normaliseAmount,
  normaliseEmail,
  normaliseICalUid,
  normaliseMessageId,
  normalisePhone,
  registrableDomain,
  titleText,
  utcPrefix,
} from './normalise';

/** Kinds of deterministic key, as stored in `match_key.kind`. */
export const MATCH_KEY_KINDS = [
  'email',
  'ical_uid',
  'message_id',
  'domain',
  'phone',
  'phone_name',
  'deal_amount',
  'deal_close',
  'meeting_slot',
] as const;
export type MatchKeyKind = (typeof MATCH_KEY_KINDS)[number];

/**
 * Kinds of key that link records of different connections only: a deal's name with its
 * amount or close day, a meeting's title with its start minute. They are weaker than an
 * address or a UID, so a match on one of them also needs the two records not to contradict
 * each other on any fact kind both carry (see `FACT_KINDS`), and it never links two records
 * of one connection (one CRM can hold two deals of one name; they are two deals).
 */
export const CROSS_CONNECTION_KINDS: ReadonlySet<string> = new Set([
  'deal_amount',
  'deal_close',
  'meeting_slot',
]);

/**
 * Kinds of key the index remembers per entity, so that a cross-connection match can be
 * checked for contradictions: a deal of another amount, a meeting with another iCalUID.
 */
export const FACT_KINDS: ReadonlySet<string> = new Set([
  'deal_amount',
  'deal_close',
  'meeting_slot',
  'ical_uid',
]);

export const kindOf = (key: string): string => key.slice(0, key.indexOf(':'));

/**
 * Kinds of key that are evidence for review, never a link: a phone number alone (a family's
 * line, a switchboard). A person's phone links only as `phone_name`, together with the same
 * person's name.
 */
export const REVIEW_ONLY_KINDS: ReadonlySet<string> = new Set(['phone']);

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
  /**
   * Fuzzy score at or above which a new entity is flagged as a possible duplicate. A fuzzy
   * score never links: names, however close, with a shared company or domain are evidence for a
   * person to review.
   */
  reviewThreshold: number;
}

export const DEFAULT_SETTINGS: IdentitySettings = {
  plusAddressing: false,
  gmailDots: false,
  defaultCountry: undefined,
  participants: 'create-person',
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
  /**
   * Looked up like keys (`phone:`) or blocks (anything else) for fuzzy candidates, never stored:
   * where a phone number written without a country code could be, and the reverse.
   */
  probes?: string[];
  /** The connection the record came from, when known: cross-connection keys need it. */
  source?: string;
}

export const encodeKey = (kind: MatchKeyKind, value: string): string => `${kind}:${value}`;

export function decodeKey(key: string): MatchKey {
  const colon = key.indexOf(':');
  return { kind: key.slice(0, colon) as MatchKeyKind, value: key.slice(colon + 1) };
}

const KIND_RANK: Record<string, number> = {
  email: 0,
  ical_uid: 1,
  message_id: 2,
  domain: 3,
  phone_name: 4,
  phone: 5,
  deal_amount: 6,
  deal_close: 7,
  meeting_slot: 8,
};
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
 * - meeting: `iCalUID`, `title`, `startAt`; email_activity: `messageId`
 * - deal: `name`, `amount`, `closeDate` (never `ownerId`, `pipeline` or `stage`: those are ids
 *   of one portal)
 * - task: no keys; it is identified by its source link alone.
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
    case 'meeting':
      return meetingRecord(fields);
    case 'deal':
      return dealRecord(fields);
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
  const nationals: string[] = [];
  for (const raw of [...list(fields.phone), ...list(fields.phones)]) {
    const phone = normalisePhone(raw, settings.defaultCountry);
    if (phone && !phones.includes(phone)) phones.push(phone);
    const national = phone ? null : nationalPhoneDigits(raw, settings.defaultCountry);
    if (national && !nationals.includes(national)) nationals.push(national);
  }
  const first = str(fields.firstName);
  const last = str(fields.lastName);
  const rawName = first || last ? [first, last].filter(Boolean).join(' ') : str(fields.name);
  const tokens = nameTokens(rawName);
  const keys = [...emails.map((e) => encodeKey('email', e)), ...phones.map((p) => encodeKey('phone', p))];
  // A phone links only with the same person's name: `phone_name:<national digits>|<first and last
  // name tokens, sorted>`. Maria and Mario sharing a family line hold two keys; a number written
  // without its country code meets the same number written in full by its national digits.
  const nameEnds = tokens.length >= 2 ? [tokens[0]!, tokens[tokens.length - 1]!].sort().join('|') : '';
  if (nameEnds) {
    const digits = new Set<string>(nationals);
    for (const phone of phones) {
      const national = nationalDigitsOf(phone);
      if (national) digits.add(national);
    }
    for (const national of digits) keys.push(encodeKey('phone_name', `${national}|${nameEnds}`));
  }
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
  // A number written without a country code (and no default country to place it) is kept as
  // its national digits, `tel:<digits>`. It meets the same number written in full either way
  // round: this record probes `phone:+<code><digits>` for every calling code, and a record
  // with a full number probes `tel:` with its last digits after a 1- to 3-digit code. Either
  // is corroboration for a close name, never a deterministic key.
  const probes: string[] = [];
  for (const national of nationals) {
    blocks.add(`tel:${national}`);
    probes.push(encodeKey('phone', `+${national}`));
    for (const code of countryCallingCodes()) probes.push(encodeKey('phone', `+${code}${national}`));
  }
  for (const phone of phones) {
    for (let k = 2; k <= 4; k++) if (phone.length - k >= 7) probes.push(`tel:${phone.slice(k)}`);
  }
  return {
    entityType: 'person',
    keys,
    blocks: [...blocks],
    name: tokens.join(' '),
    displayName: rawName ?? emails[0],
    ...(probes.length > 0 ? { probes } : {}),
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

/**
 * A deal: `deal_amount:<name>|<amount>` and `deal_close:<name>|<close day, UTC>`, the name
 * as `titleText` spells it. Either links across connections when the other fact does not
 * disagree (see `CROSS_CONNECTION_KINDS`); a deal with a name but neither fact has no key. The
 * exact name is also a block, so a deal of the same name that did not link goes to review.
 */
function dealRecord(fields: Record<string, unknown>): MatchRecord {
  const name = titleText(fields.name);
  const displayName = str(fields.name);
  if (!name) return bare('deal', [], displayName);
  const keys: string[] = [];
  const amount = normaliseAmount(fields.amount);
  if (amount !== null) keys.push(encodeKey('deal_amount', `${name}|${amount}`));
  const close = utcPrefix(fields.closeDate, 10);
  if (close) keys.push(encodeKey('deal_close', `${name}|${close}`));
  return { entityType: 'deal', keys, blocks: [`name:${name}`], name, displayName };
}

/**
 * A meeting: `ical_uid` (the strongest key, across every copy of a calendar event), and
 * `meeting_slot:<title>|<start to the minute, UTC>` for a copy logged by hand in a CRM, which
 * has no iCalUID. The slot links across connections only, and not where both carry an
 * iCalUID and they differ.
 */
function meetingRecord(fields: Record<string, unknown>): MatchRecord {
  const keys: string[] = [];
  const uid = normaliseICalUid(fields.iCalUID ?? fields.icalUid);
  if (uid) keys.push(encodeKey('ical_uid', uid));
  const title = titleText(fields.title);
  const start = utcPrefix(fields.startAt, 16);
  if (title && start) keys.push(encodeKey('meeting_slot', `${title}|${start}`));
  return bare('meeting', keys, str(fields.title));
}
