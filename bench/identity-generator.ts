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
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
