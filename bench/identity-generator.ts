import { mulberry32 } from '@syncline/core';
/**
 * Seeded synthetic people for the identity benches: distinct people plus ~15 % planted
 * duplicates (typos, formatting, swapped names, alternate emails), with ground truth.
 *
 * Traps for precision are planted too: common names are common (skewed draws), so many
 * distinct people share a name; some people share their company's switchboard number.
 * Every planted duplicate keeps at least one piece of evidence a reviewer would accept
 * (its email, its phone, an alternate address at the same company, or the same mailbox
 * name at a free-mail provider): a duplicate that shares only a name is not recoverable
 * at 0.99 precision by anyone, so it is not planted as one.
 */

export interface SyntheticRecord {
  fields: Record<string, unknown>;
  /** Index of the real person this record describes: the ground truth. */
  truth: number;
  duplicate: boolean;
}

/** mulberry32: small, fast, good enough for synthetic data. */
export const rng = mulberry32;

const ONSETS = [
  'b',
  'c',
  'd',
  'f',
  'g',
  'h',
  'j',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'w',
  'z',
  'br',
  'ch',
  'st',
  'tr',
  'sh',
  'kl',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', 'n', 'r', 's', 'l', 'th', 'nd', 'rt', 'x', 'm'];
const TLDS = ['com', 'com', 'com', 'io', 'co.uk', 'de', 'fr', 'net'];
const FREE = ['gmail.com', 'yahoo.com', 'outlook.com', 'hotmail.com', 'icloud.com'];

function word(rand: () => number, syllables: number): string {
  let out = '';
  for (let i = 0; i < syllables; i++) {
    out += ONSETS[Math.floor(rand() * ONSETS.length)]! + VOWELS[Math.floor(rand() * VOWELS.length)]!;
  }
  return out + CODAS[Math.floor(rand() * CODAS.length)]!;
}

function vocabulary(rand: () => number, size: number, minSyllables: number): string[] {
  const seen = new Set<string>();
  while (seen.size < size) seen.add(word(rand, minSyllables + Math.floor(rand() * 2)));
  return [...seen];
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** Skewed draw: low indexes are much more likely (common names are common). */
const skewed = (rand: () => number, n: number) => Math.floor(n * rand() ** 2.2);

interface Company {
  name: string;
  domain: string;
  switchboard: string;
}

interface Base {
  first: string;
  last: string;
  email: string;
  work: boolean;
  company: Company;
  /** Digits of a US number, or '' when the person has no phone. */
  phone: string;
  switchboard: boolean;
}

function phoneDigits(rand: () => number): string {
  const area = 201 + Math.floor(rand() * 780);
  const exchange = 200 + Math.floor(rand() * 790);
  const line = Math.floor(rand() * 10000);
  return `${area}${exchange}${String(line).padStart(4, '0')}`;
}

function formatPhone(digits: string, style: number): string {
  const a = digits.slice(0, 3);
  const b = digits.slice(3, 6);
  const c = digits.slice(6);
  switch (style % 4) {
    case 0:
      return `+1${digits}`;
    case 1:
      return `(${a}) ${b}-${c}`;
    case 2:
      return `${a}.${b}.${c}`;
    default:
      return `+1 ${a} ${b} ${c}`;
  }
}

function typo(rand: () => number, s: string): string {
  if (s.length < 3) return s;
  const i = 1 + Math.floor(rand() * (s.length - 1));
  const op = Math.floor(rand() * 3);
  if (op === 0 && i < s.length - 1) return s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2); // transpose
  if (op === 1) return s.slice(0, i) + s.slice(i + 1); // delete
  return s.slice(0, i) + 'aeiourstln'[Math.floor(rand() * 10)] + s.slice(i + 1); // substitute
}

function shout(rand: () => number, email: string): string {
  const r = rand();
  if (r < 0.33) return email.toUpperCase();
  if (r < 0.66) return ` ${capital(email)} `;
  return email;
}

/** `total` records, about 15 % of them duplicates of earlier people, reproducible from `seed`. */
export function* syntheticPeople(total: number, seed = 42): Generator<SyntheticRecord> {
  const rand = rng(seed);
  const firsts = vocabulary(rand, 4000, 1);
  const lasts = vocabulary(rand, 60000, 2);
  const companies: Company[] = [];
  const companyCount = Math.max(10, Math.floor(total / 12));
  const domains = new Set<string>();
  while (companies.length < companyCount) {
    const name = capital(word(rand, 2));
    const domain = `${name.toLowerCase()}${companies.length % 7 === 0 ? 'group' : ''}.${TLDS[Math.floor(rand() * TLDS.length)]}`;
    if (domains.has(domain)) continue;
    domains.add(domain);
    companies.push({
      name: `${name} ${rand() < 0.5 ? 'Inc.' : 'Ltd'}`,
      domain,
      switchboard: phoneDigits(rand),
    });
  }
  const bases: Base[] = [];
  const emails = new Set<string>();
  const unique = (email: string) => {
    let candidate = email;
    for (let n = 2; emails.has(candidate); n++) candidate = email.replace('@', `${n}@`);
    emails.add(candidate);
    return candidate;
  };

  for (let i = 0; i < total; i++) {
    if (bases.length > 0 && rand() < 0.15) {
      const truth = Math.floor(rand() * bases.length);
      yield { fields: duplicateOf(rand, bases[truth]!, unique), truth, duplicate: true };
      continue;
    }
    const first = firsts[skewed(rand, firsts.length)]!;
    const last = lasts[skewed(rand, lasts.length)]!;
    const company = companies[skewed(rand, companies.length)]!;
    const work = rand() < 0.72;
    const pattern = rand();
    const local =
      pattern < 0.6 ? `${first}.${last}` : pattern < 0.85 ? `${first[0]}${last}` : `${first}${last}`;
    const email = unique(
      work
        ? `${local}@${company.domain}`
        : `${local}${Math.floor(rand() * 100)}@${FREE[Math.floor(rand() * FREE.length)]}`,
    );
    const hasPhone = rand() < 0.7;
    const switchboard = hasPhone && rand() < 0.05;
    const base: Base = {
      first,
      last,
      email,
      work,
      company,
      phone: hasPhone ? (switchboard ? company.switchboard : phoneDigits(rand)) : '',
      switchboard,
    };
    bases.push(base);
    yield {
      fields: {
        firstName: capital(first),
        lastName: capital(last),
        email,
        ...(base.phone ? { phone: formatPhone(base.phone, Math.floor(rand() * 4)) } : {}),
        company: company.name,
      },
      truth: bases.length - 1,
      duplicate: false,
    };
  }
}

function duplicateOf(
  rand: () => number,
  base: Base,
  unique: (email: string) => string,
): Record<string, unknown> {
  let first = capital(base.first);
  let last = capital(base.last);
  const n = rand();
  if (n < 0.3) {
    if (rand() < 0.5) first = capital(typo(rand, base.first));
    else last = capital(typo(rand, base.last));
  } else if (n < 0.5) {
    [first, last] = [last, first];
  } else if (n < 0.65) {
    first = `  ${first.toUpperCase()}`;
    last = `${last.toLowerCase()} `;
  }

  const phone = base.phone && rand() < 0.6 ? base.phone : '';
  const e = rand();
  let email: string | undefined;
  let evidence = phone !== '';
  if (e < 0.55) {
    email = shout(rand, base.email);
    evidence = true;
  } else if (e < 0.85) {
    const a = rand();
    const local = base.email.slice(0, base.email.indexOf('@'));
    if (a < 0.5 && base.work) {
      email = unique(`${base.first}${base.last[0]}@${base.company.domain}`);
      evidence = true;
    } else if (a < 0.75 && local.length >= 6) {
      email = unique(`${local}@${FREE[Math.floor(rand() * FREE.length)]}`);
      evidence = true;
    } else {
      email = unique(
        `${base.first[0]}${base.last}${Math.floor(rand() * 1000)}@${FREE[Math.floor(rand() * FREE.length)]}`,
      );
    }
  }
  if (!evidence) email = shout(rand, base.email);
  return {
    firstName: first,
    lastName: last,
    ...(email ? { email } : {}),
    ...(phone ? { phone: formatPhone(phone, Math.floor(rand() * 4)) } : {}),
    ...(rand() < 0.7 ? { company: base.company.name } : {}),
  };
}

/**
 * Adversarial near-duplicates for `identity-batch`: different people who look alike, and the
 * same people written differently, spread over two CRMs and a mailbox, with ground truth.
 *
 * - `near-name`: two or three colleagues with one surname at one company (one email domain),
 *   first names a letter or two apart (Maria/Mario, Jon/Joan, Daniel/Daniela), each with their
 *   own address and phone (or none). Each is in one CRM or both, so one may arrive in CRM B
 *   while only the other is known from CRM A.
 * - `family`: relatives with one surname sharing one home phone, different first names (some a
 *   letter apart: twins Jon and Joan), each with their own address.
 * - `numbered`: "Person 01" … "Person 30" (or "Person 1" … "Person 30") at one company, each
 *   with their own address, half of them on the company's switchboard number.
 * - `job-change`: a person who moved company, their old colleague a letter apart still there:
 *   CRM A has the old work address, CRM B the new one, tied by the same phone and name or by
 *   the same personal address.
 * - `formatting`: one person in several systems, the address in another case, the phone in
 *   another format, the name in other capitals and spacing.
 *
 * Every person seen more than once keeps evidence a reviewer would accept between their
 * records: the same address (any case), or the same phone under the same name (never a
 * switchboard). A mailbox record is a mail participant: its address and nothing else.
 */
export type AdversarialKind = 'near-name' | 'family' | 'numbered' | 'job-change' | 'formatting';
export const ADVERSARIAL_KINDS: readonly AdversarialKind[] = [
  'near-name',
  'family',
  'numbered',
  'job-change',
  'formatting',
];
export const CONNECTIONS = ['crm-a', 'crm-b', 'mailbox'] as const;
export type Connection = (typeof CONNECTIONS)[number];

export interface AdversarialRecord extends SyntheticRecord {
  connection: Connection;
  kind: AdversarialKind;
}

/** First names a letter or two apart; the first of each set is paired with the others. */
const NEAR_NAMES: string[][] = [
  ['Maria', 'Mario', 'Marie'],
  ['Jon', 'Joan', 'Jan'],
  ['Ana', 'Ava', 'Ada'],
  ['Daniel', 'Daniela'],
  ['Paul', 'Paula'],
  ['Carla', 'Carlo'],
  ['Eric', 'Erica'],
  ['Louis', 'Louise'],
  ['Frances', 'Francis'],
  ['Alexander', 'Alexandra'],
  ['Adrian', 'Adriana'],
  ['Gabriel', 'Gabriela'],
  ['Michael', 'Michaela'],
  ['Stefan', 'Stephan'],
  ['Kristen', 'Kirsten'],
  ['Marta', 'Martha'],
  ['Sara', 'Sarah'],
  ['Lena', 'Lana', 'Lina'],
  ['Dana', 'Dina', 'Dona'],
  ['Ian', 'Ivan'],
  ['Julia', 'Julio'],
  ['Lucia', 'Lucio'],
  ['Karin', 'Karen'],
  ['Leon', 'Leona'],
  ['Marc', 'Mark'],
  ['Anne', 'Anna'],
  ['Simon', 'Simone'],
  ['Paola', 'Paolo'],
  ['Angela', 'Angelo'],
  ['Silvia', 'Silvio'],
  ['Toni', 'Tony'],
  ['Rene', 'Renee'],
];
const OTHER_FIRSTS = [
  'Robert',
  'Linda',
  'Thomas',
  'Grace',
  'Oliver',
  'Priya',
  'Kenji',
  'Fatima',
  'Henrik',
  'Olga',
  'Samuel',
  'Beatriz',
  'Wei',
  'Nadia',
  'George',
  'Ingrid',
];
const SURNAMES = [
  'Garcia',
  'Smith',
  'Nguyen',
  'Kim',
  'Müller',
  'Rossi',
  'Silva',
  'Santos',
  'Kowalski',
  'Novak',
  'Tanaka',
  'Patel',
  'Singh',
  'Martin',
  'Bernard',
  'Dubois',
  'Schmidt',
  'Fischer',
  'Jansen',
  'de Vries',
  'Andersson',
  'Nielsen',
  'Hansen',
  'Lopez',
  'Fernández',
  'González',
  'Peña',
  'Ivanov',
  'Horvat',
  'Papadopoulos',
  'Yilmaz',
  'Cohen',
  "O'Brien",
  'Murphy',
  'Walsh',
  'Chen',
  'Wang',
  'Li',
  'Sato',
  'Park',
  'Okafor',
  'Mensah',
  'Haddad',
  'Khan',
  'Costa',
  'Ferreira',
  'Moreau',
  'Lambert',
];
const COMPANY_A = [
  'Acme',
  'Northwind',
  'Globex',
  'Initech',
  'Umbrella',
  'Stark',
  'Wayne',
  'Hooli',
  'Vandelay',
  'Soylent',
  'Tyrell',
  'Cyberdyne',
  'Wonka',
  'Gringotts',
  'Oscorp',
  'Pied',
  'Dunder',
  'Prestige',
  'Monarch',
  'Blue Sun',
];
const COMPANY_B = [
  'Widgets',
  'Traders',
  'Logistics',
  'Analytics',
  'Foods',
  'Labs',
  'Systems',
  'Holdings',
  'Media',
  'Partners',
  'Robotics',
  'Freight',
  'Health',
  'Energy',
  'Capital',
  'Studios',
  'Works',
  'Networks',
  'Dynamics',
  'Supply',
];

/** Lower-case ASCII letters of a name, for an address built from it (`Peña` → `pena`). */
const slug = (s: string) =>
  s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');

interface AdvCompany {
  name: string;
  domain: string;
  switchboard: string;
}

interface AdvPerson {
  truth: number;
  kind: AdversarialKind;
  first: string;
  last: string;
  /** Work address (or the only one). */
  email: string;
  /** A personal address some records carry besides the work one. */
  personal?: string;
  /** Digits of a US number, or '' for none. */
  phone: string;
  /** The phone is shared (a switchboard): never the evidence between two records. */
  sharedLine: boolean;
  company?: AdvCompany;
}

/**
 * About `target` adversarial records (at least one of each kind), reproducible from `seed`,
 * in arrival order by connection: CRM A's backfill, then CRM B's, then the mailbox.
 */
export function adversarialPeople(target = 2400, seed = 7): AdversarialRecord[] {
  const rand = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const out: Record<Connection, AdversarialRecord[]> = { 'crm-a': [], 'crm-b': [], mailbox: [] };
  let count = 0;
  let people = 0;
  const phones = new Set<string>();
  const freshPhone = () => {
    let digits = phoneDigits(rand);
    while (phones.has(digits)) digits = phoneDigits(rand);
    phones.add(digits);
    return digits;
  };
  const emails = new Set<string>();
  const freshEmail = (local: string, domain: string) => {
    let candidate = `${local}@${domain}`;
    for (let n = 2; emails.has(candidate); n++) candidate = `${local}${n}@${domain}`;
    emails.add(candidate);
    return candidate;
  };
  const companies = new Set<string>();
  const freshCompany = (): AdvCompany => {
    let name = `${pick(COMPANY_A)} ${pick(COMPANY_B)}`;
    for (let n = 2; companies.has(name); n++) name = `${name.replace(/ \d+$/, '')} ${n}`;
    companies.add(name);
    return {
      name: `${name}${rand() < 0.5 ? ' Inc.' : ''}`,
      domain: `${slug(name)}.example`,
      switchboard: freshPhone(),
    };
  };
  const person = (kind: AdversarialKind, p: Omit<AdvPerson, 'truth' | 'kind'>): AdvPerson => ({
    ...p,
    truth: people++,
    kind,
  });
  const push = (who: AdvPerson, connection: Connection, fields: Record<string, unknown>) => {
    out[connection].push({ fields, truth: who.truth, duplicate: false, connection, kind: who.kind });
    count++;
  };
  const name = (who: AdvPerson) => {
    const r = rand();
    if (r < 0.15) return { firstName: who.first.toUpperCase(), lastName: who.last.toUpperCase() };
    if (r < 0.25) return { firstName: ` ${who.first.toLowerCase()}`, lastName: `${who.last}  ` };
    return { firstName: who.first, lastName: who.last };
  };
  const phone = (who: AdvPerson) =>
    who.phone ? { phone: formatPhone(who.phone, Math.floor(rand() * 4)) } : {};
  const company = (who: AdvPerson, c = who.company) =>
    c ? { company: rand() < 0.3 ? c.name.replace(/ Inc\.$/, '') : c.name } : {};
  /** A CRM record with everything the person has. */
  const full = (who: AdvPerson, connection: Connection) =>
    push(who, connection, {
      ...name(who),
      ...(who.personal && rand() < 0.5
        ? { emails: [shout(rand, who.email), who.personal] }
        : { email: shout(rand, who.email) }),
      ...phone(who),
      ...company(who),
    });
  /** Another CRM's record of a person already written once: the same address, or the same phone and name. */
  const again = (who: AdvPerson, connection: Connection) => {
    if (who.phone && !who.sharedLine && rand() < 0.35) {
      push(who, connection, {
        ...name(who),
        phone: formatPhone(who.phone, Math.floor(rand() * 4)),
        ...company(who),
      });
    } else {
      push(who, connection, {
        ...name(who),
        email: shout(rand, who.email),
        ...(rand() < 0.6 ? phone(who) : {}),
        ...(rand() < 0.7 ? company(who) : {}),
      });
    }
  };
  /** One CRM or both (either first), and sometimes the mailbox. */
  const spread = (who: AdvPerson) => {
    const r = rand();
    const crms: Connection[] = r < 0.3 ? ['crm-a'] : r < 0.55 ? ['crm-b'] : ['crm-a', 'crm-b'];
    full(who, crms[0]!);
    if (crms[1]) again(who, crms[1]);
    if (rand() < 0.3) push(who, 'mailbox', { email: shout(rand, who.email) });
  };
  const workEmail = (first: string, last: string, c: AdvCompany) => {
    const r = rand();
    const local = r < 0.7 ? `${slug(first)}.${slug(last)}` : `${slug(first)[0]}${slug(last)}`;
    return freshEmail(local, c.domain);
  };
  const personalEmail = (first: string, last: string) =>
    freshEmail(`${slug(first)}.${slug(last)}${Math.floor(rand() * 100)}`, pick(FREE));

  const nearName = () => {
    const set = pick(NEAR_NAMES);
    const size = set.length > 2 && rand() < 0.4 ? 3 : 2;
    const last = pick(SURNAMES);
    const c = freshCompany();
    for (const first of set.slice(0, size)) {
      spread(
        person('near-name', {
          first,
          last,
          email: workEmail(first, last, c),
          phone: rand() < 0.8 ? freshPhone() : '',
          sharedLine: false,
          company: c,
        }),
      );
    }
  };
  const family = () => {
    const last = pick(SURNAMES);
    const home = freshPhone();
    const firsts = rand() < 0.6 ? pick(NEAR_NAMES).slice(0, 2) : [];
    while (firsts.length < 2 + Math.floor(rand() * 3)) {
      const first = pick(OTHER_FIRSTS);
      if (!firsts.includes(first)) firsts.push(first);
    }
    for (const first of firsts) {
      const c = rand() < 0.5 ? freshCompany() : undefined;
      spread(
        person('family', {
          first,
          last,
          email: c ? workEmail(first, last, c) : personalEmail(first, last),
          phone: home,
          // Shared, but by people of different names: the same name with it is the same person.
          sharedLine: false,
          ...(c ? { company: c } : {}),
        }),
      );
    }
  };
  let numberedGroups = 0;
  const numbered = () => {
    const c = freshCompany();
    const padded = numberedGroups++ % 2 === 0;
    for (let n = 1; n <= 30; n++) {
      const number = padded ? String(n).padStart(2, '0') : String(n);
      const onSwitchboard = rand() < 0.5;
      spread(
        person('numbered', {
          first: 'Person',
          last: number,
          email: freshEmail(rand() < 0.5 ? `person${number}` : `person.${number}`, c.domain),
          phone: onSwitchboard ? c.switchboard : rand() < 0.5 ? freshPhone() : '',
          sharedLine: onSwitchboard,
          company: c,
        }),
      );
    }
  };
  const jobChange = () => {
    const set = pick(NEAR_NAMES);
    const last = pick(SURNAMES);
    const old = freshCompany();
    const next = freshCompany();
    const [first, colleague] = rand() < 0.5 ? [set[0]!, set[1]!] : [set[1]!, set[0]!];
    const byPersonal = rand() < 0.35;
    const mover = person('job-change', {
      first,
      last,
      email: workEmail(first, last, old),
      ...(byPersonal ? { personal: personalEmail(first, last) } : {}),
      phone: byPersonal && rand() < 0.5 ? '' : freshPhone(),
      sharedLine: false,
      company: old,
    });
    // CRM A knows the old job; CRM B the new one.
    push(mover, 'crm-a', {
      ...name(mover),
      ...(mover.personal
        ? { emails: [shout(rand, mover.email), mover.personal] }
        : { email: shout(rand, mover.email) }),
      ...phone(mover),
      ...company(mover),
    });
    const newEmail = workEmail(first, last, next);
    push(mover, 'crm-b', {
      ...name(mover),
      ...(mover.personal ? { emails: [newEmail, shout(rand, mover.personal)] } : { email: newEmail }),
      ...phone(mover),
      ...company(mover, next),
    });
    if (rand() < 0.3) push(mover, 'mailbox', { email: rand() < 0.5 ? newEmail : mover.email });
    spread(
      person('job-change', {
        first: colleague,
        last,
        email: workEmail(colleague, last, old),
        phone: rand() < 0.8 ? freshPhone() : '',
        sharedLine: false,
        company: old,
      }),
    );
  };
  const formatting = () => {
    const first = pick(rand() < 0.5 ? OTHER_FIRSTS : pick(NEAR_NAMES));
    const last = pick(SURNAMES);
    const c = freshCompany();
    const who = person('formatting', {
      first,
      last,
      email: workEmail(first, last, c),
      phone: freshPhone(),
      sharedLine: false,
      company: c,
    });
    full(who, 'crm-a');
    again(who, 'crm-b');
    if (rand() < 0.5) push(who, 'mailbox', { email: shout(rand, who.email) });
  };

  const makers = [nearName, family, numbered, jobChange, formatting];
  for (const make of makers) make();
  while (count < target) {
    const r = rand();
    if (r < 0.4) nearName();
    else if (r < 0.6) family();
    else if (r < 0.8) jobChange();
    else if (r < 0.97) formatting();
    else numbered();
  }
  const records = [...out['crm-a'], ...out['crm-b'], ...out.mailbox];
  const seen = new Set<number>();
  for (const record of records) {
    record.duplicate = seen.has(record.truth);
    seen.add(record.truth);
  }
  return records;
}
