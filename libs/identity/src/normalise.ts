import {
  type CountryCode,
  getCountries,
  getCountryCallingCode,
  parsePhoneNumberFromString,
} from 'libphonenumber-js';
import { getDomain } from 'tldts';

export interface EmailRules {
  /** Drop `+tag` from the local part (`ana+crm@x.com` → `ana@x.com`). Off unless a setting says so. */
  plusAddressing?: boolean;
  /** Gmail ignores dots in the local part and treats googlemail.com as gmail.com. */
  gmailDots?: boolean;
}

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);
// `Ana Lima <ana@x.com>`, `<ana@x.com>`, `mailto:ana@x.com`
const ANGLE = /<([^<>]*)>\s*$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Trimmed, lower-cased address, or null when the value is not an email address. */
export function normaliseEmail(raw: unknown, rules: EmailRules = {}): string | null {
  if (typeof raw !== 'string') return null;
  let value = raw.trim();
  const angle = ANGLE.exec(value);
  if (angle) value = angle[1]!.trim();
  value = value.toLowerCase();
  if (value.startsWith('mailto:')) value = value.slice(7);
  if (!EMAIL.test(value)) return null;
  const at = value.lastIndexOf('@');
  let local = value.slice(0, at);
  let domain = value.slice(at + 1);
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  if (rules.plusAddressing) {
    const plus = local.indexOf('+');
    if (plus > 0) local = local.slice(0, plus);
  }
  if (rules.gmailDots && GMAIL_DOMAINS.has(domain)) {
    local = local.replaceAll('.', '');
    domain = 'gmail.com';
  }
  if (!local) return null;
  return `${local}@${domain}`;
}

const E164 = /^\+[1-9]\d{7,14}$/;

/** E.164 (`+14155550132`), or null when the value is not a possible phone number. */
export function normalisePhone(raw: unknown, defaultCountry?: CountryCode): string | null {
  if (typeof raw !== 'string' && typeof raw !== 'number') return null;
  const value = String(raw).trim();
  if (!value) return null;
  // Already canonical: skip the parser, which costs ~10 µs a call.
  if (E164.test(value)) return value;
  const parsed = parsePhoneNumberFromString(value, defaultCountry);
  if (!parsed?.isPossible()) return null;
  return parsed.number;
}

/**
 * The national significant digits of an E.164 number (`+14155550132` → `4155550132`,
 * `+442079460012` → `2079460012`): what the same number written without its country code
 * reduces to (see `nationalPhoneDigits`). Null when the number does not parse.
 */
export function nationalDigitsOf(e164: string): string | null {
  return parsePhoneNumberFromString(e164)?.nationalNumber ?? null;
}

/**
 * The digits of a phone number written without a country code (`(415) 555-0132`,
 * `020 7946 0012`) that `normalisePhone` could not place, with a trunk `0` (or an
 * international `00`) dropped: `4155550132`, `2079460012`. Null for a number that parsed, or
 * that has too few digits to say anything. Such a number is only ever corroborating evidence:
 * the country it belongs to is a guess.
 */
export function nationalPhoneDigits(raw: unknown, defaultCountry?: CountryCode): string | null {
  if (typeof raw !== 'string' && typeof raw !== 'number') return null;
  if (normalisePhone(raw, defaultCountry)) return null;
  const value = String(raw).trim();
  if (value.startsWith('+')) return null;
  let digits = value.replace(/\D+/g, '');
  if (digits.startsWith('00')) digits = digits.slice(2);
  else if (digits.startsWith('0')) digits = digits.slice(1);
  return digits.length >= 7 && digits.length <= 14 ? digits : null;
}

let callingCodes: string[] | undefined;

/** Every country calling code (`1`, `44`, `353`, …), once each. */
export function countryCallingCodes(): readonly string[] {
  callingCodes ??= [...new Set(getCountries().map((c) => String(getCountryCallingCode(c))))].sort();
  return callingCodes;
}

/** The registrable domain of a host, URL or email address (`ana@mail.acme.co.uk` → `acme.co.uk`). */
export function registrableDomain(hostOrEmail: unknown): string | null {
  if (typeof hostOrEmail !== 'string') return null;
  let value = hostOrEmail.trim().toLowerCase();
  const at = value.lastIndexOf('@');
  if (at >= 0) value = value.slice(at + 1);
  if (!value) return null;
  return getDomain(value) ?? null;
}

// Mail providers whose domain says nothing about where a person works.
const FREE_MAIL = new Set([
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'hotmail.com',
  'hotmail.co.uk',
  'outlook.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'yandex.ru',
  'mail.ru',
  'qq.com',
  '163.com',
  'fastmail.com',
  'zoho.com',
]);

export const isFreeMailDomain = (domain: string): boolean => FREE_MAIL.has(domain);

const HONORIFICS = new Set([
  'mr',
  'mrs',
  'ms',
  'miss',
  'dr',
  'prof',
  'sir',
  'jr',
  'sr',
  'ii',
  'iii',
  'iv',
  'phd',
]);
const COMPANY_SUFFIXES = new Set([
  'inc',
  'incorporated',
  'ltd',
  'limited',
  'llc',
  'llp',
  'plc',
  'gmbh',
  'ag',
  'sa',
  'sas',
  'sarl',
  'bv',
  'nv',
  'corp',
  'corporation',
  'co',
  'company',
  'srl',
  'spa',
  'oy',
  'ab',
  'as',
  'pty',
]);
const NON_LETTERS = /[^\p{L}\p{N}]+/u;
const MARKS = /\p{M}/gu;

function tokens(raw: unknown, drop: Set<string>): string[] {
  if (typeof raw !== 'string') return [];
  const folded = raw.normalize('NFKD').replace(MARKS, '').toLowerCase();
  return folded.split(NON_LETTERS).filter((t) => t.length > 0 && !drop.has(t));
}

/** Lower-case, accent-free tokens of a person's name, without honorifics. */
export const nameTokens = (raw: unknown): string[] => tokens(raw, HONORIFICS);

/** Tokens of a company name without legal-form suffixes (`Acme, Inc.` → `acme`). */
export const companyNameTokens = (raw: unknown): string[] => tokens(raw, COMPANY_SUFFIXES);

/**
 * Calendar iCalUID: exact apart from surrounding space, except that an Exchange Global Object
 * ID carrying another system's UID reads as that UID (see `uidInGlobalObjectId`), so Outlook's
 * copy of a meeting sent from Google Calendar has the `iCalUID` Google gives it.
 */
export function normaliseICalUid(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const value = raw.trim();
  if (!value) return null;
  return uidInGlobalObjectId(value) ?? value;
}

/**
 * An Exchange Global Object ID (MS-OXOCAL 2.2.1.27 PidLidGlobalObjectId), as Graph reports it
 * in `iCalUId`, in hex: a 16-byte class id, YH YL M D (the occurrence's original date, all
 * zero for a series or a single meeting), an 8-byte FILETIME of creation, 8 reserved zero
 * bytes, the data's size (4 bytes, little-endian), and the data. A meeting that came from
 * another system carries its UID in the data: `vCal-Uid`, `01 00 00 00`, the UID's bytes, `00`
 * (MS-ASEMAIL 2.2.2.37 GlobalObjId). Meetings made in Exchange carry an opaque id instead.
 */
const GOID_CLASS_ID = '040000008200E00074C5B7101A82E008';
const GOID_HEADER_BYTES = 40;
const VCAL_UID_MARKER = [0x76, 0x43, 0x61, 0x6c, 0x2d, 0x55, 0x69, 0x64, 0x01, 0x00, 0x00, 0x00];
const HEX_DIGITS = /^[0-9A-Fa-f]+$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The UID a Global Object ID in hex carries behind `vCal-Uid`, or null when the value is not
 * exactly such an id (a plain UID, an Exchange meeting's own id, anything malformed). One
 * occurrence of a series (date bytes set) reads as the UID and its original date
 * (`abc@google.com#2030-03-11`): occurrences are meetings of their own and never share the
 * series' value.
 */
function uidInGlobalObjectId(value: string): string | null {
  const minLength = 2 * (GOID_HEADER_BYTES + VCAL_UID_MARKER.length + 2);
  if (value.length < minLength || value.length % 2 !== 0 || !HEX_DIGITS.test(value)) return null;
  if (value.slice(0, GOID_CLASS_ID.length).toUpperCase() !== GOID_CLASS_ID) return null;
  const bytes = new Uint8Array(value.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(value.slice(2 * i, 2 * i + 2), 16);
  for (let i = 28; i < 36; i++) if (bytes[i] !== 0) return null;
  const size = new DataView(bytes.buffer).getUint32(36, true);
  if (size !== bytes.length - GOID_HEADER_BYTES) return null;
  for (let i = 0; i < VCAL_UID_MARKER.length; i++)
    if (bytes[GOID_HEADER_BYTES + i] !== VCAL_UID_MARKER[i]) return null;
  if (bytes[bytes.length - 1] !== 0) return null;
  const uidBytes = bytes.subarray(GOID_HEADER_BYTES + VCAL_UID_MARKER.length, bytes.length - 1);
  if (uidBytes.includes(0)) return null;
  let uid: string;
  try {
    uid = UTF8.decode(uidBytes);
  } catch {
    return null;
  }
  if (hasControlCharacter(uid)) return null;
  uid = uid.trim();
  if (!uid) return null;
  const date = occurrenceDate(bytes[16]!, bytes[17]!, bytes[18]!, bytes[19]!);
  if (date === null) return null;
  return date === undefined ? uid : `${uid}#${date}`;
}

/** YH YL M D as `YYYY-MM-DD`; undefined when all zero (no occurrence), null when no real date. */
function occurrenceDate(yh: number, yl: number, month: number, day: number): string | null | undefined {
  const year = (yh << 8) | yl;
  if (year === 0 && month === 0 && day === 0) return undefined;
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate();
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && !leap ? 28 : daysInMonth)) return null;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return true;
  }
  return false;
}

/** RFC 5322 Message-ID without angle brackets; the domain part is case-insensitive. */
export function normaliseMessageId(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const value = raw.trim().replace(/^<|>$/g, '').trim();
  if (!value) return null;
  const at = value.lastIndexOf('@');
  return at < 0 ? value : `${value.slice(0, at)}@${value.slice(at + 1).toLowerCase()}`;
}

/**
 * Words of a deal name or a meeting title: accents folded, lower-cased, punctuation and
 * runs of space dropped (`Acme — Platform  2026` → `acme platform 2026`). Empty when none.
 */
export function titleText(raw: unknown): string {
  return tokens(raw, NO_WORDS).join(' ');
}
const NO_WORDS = new Set<string>();

/** An amount as a canonical decimal string (`'12500.00'`, `12500` → `12500`), or null. */
export function normaliseAmount(raw: unknown): string | null {
  if (typeof raw !== 'number' && typeof raw !== 'string') return null;
  if (typeof raw === 'string' && !raw.trim()) return null;
  const n = typeof raw === 'number' ? raw : Number(raw.trim().replace(/[,\s]/g, ''));
  return Number.isFinite(n) ? String(n) : null;
}

const DAY_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A time as an ISO UTC string cut to `length` characters (10: the day, 16: the minute), or
 * null. A bare date is midnight UTC, the way HubSpot reads back an all-day date.
 */
export function utcPrefix(raw: unknown, length: 10 | 16): string | null {
  let ms: number;
  if (typeof raw === 'number') ms = raw;
  else if (typeof raw === 'string' && raw.trim()) {
    const value = raw.trim();
    ms = DAY_ONLY.test(value) ? Date.parse(`${value}T00:00:00.000Z`) : Date.parse(value);
  } else if (raw instanceof Date) ms = raw.getTime();
  else return null;
  if (!Number.isFinite(ms)) return null;
  return new Date(ms).toISOString().slice(0, length);
}
