import { Mulberry32 } from '@syncline/core';
import {
  type EmulatorUrls,
  emulatorClient,
  type HubspotOwner,
  type PropertyValues,
} from '../e2e/support/emulator-client';

/**
 * A believable salesperson's world in the emulators, the same every time for a seed:
 * two HubSpot portals (CRM A and CRM B) with people, companies and deals, many of them in
 * both CRMs but written differently; one Google user (the salesperson) with a calendar of
 * meetings with those people, a mailbox of threads with them and a task list; and a few
 * edits that conflict (the same deal's stage changed in both CRMs at different times).
 *
 * Everything is written the way a person would make it: HubSpot records through the
 * emulator's "CRM UI" routes (CRM_UI, not our app's INTEGRATION source), Google items
 * through the user's "UI" routes. The only data-plane call is one GET of each portal's
 * owners. No webhook fires during seeding unless `webhookUrls` are given (they are set
 * after the records exist).
 *
 * Seed a fresh emulator (or another seed): the portals' ids derive from the seed, and a
 * second run on the same portals would meet its own contacts (unique emails).
 */

export interface DemoHubspotApp {
  appId: number;
  clientId: string;
  clientSecret: string;
}

export const DEMO_HUBSPOT_APP: DemoHubspotApp = Object.freeze({
  appId: 5001,
  clientId: 'syncline-demo-hubspot-client',
  clientSecret: 'syncline-demo-hubspot-secret',
});

/** Meetings, mail and task dates are laid out around this instant unless `anchor` is given. */
export const DEMO_ANCHOR = '2026-12-01T09:00:00.000Z';

export interface DemoWorldOptions {
  /** Default 1. */
  seed?: number;
  /** How many people there are (each in CRM A, CRM B or both). Default 300. */
  people?: number;
  /** Default people / 5. */
  meetings?: number;
  /** Mail threads. Default people / 4. */
  threads?: number;
  /** Default max(6, people / 20). */
  tasks?: number;
  /** The HubSpot app the portals install (the system's HUBSPOT_CLIENT_ID/SECRET/APP_ID). */
  app?: DemoHubspotApp;
  /** Default derived from the seed. */
  portalIds?: { a: number; b: number };
  /** The salesperson. Default `dana.okafor@brightwave.io`. */
  userEmail?: string;
  /** ISO instant the calendar, mail and tasks are laid out around. Default DEMO_ANCHOR. */
  anchor?: string;
  /** `now` (default) makes the conflicting edits while seeding; `deferred` leaves them to `applyConflicts()`. */
  conflicts?: 'now' | 'deferred';
  /** Set after seeding: where each portal posts webhooks. */
  webhookUrls?: { a?: string; b?: string };
  /** Set on the Google user: where Gmail pushes go. */
  gmailPushUrl?: string;
  /**
   * Also a third portal, CRM C, left unconnected for an admin to connect (in dry run first):
   * some of the people of A and B, some under another job title, and a few of its own.
   */
  sparePortal?: { webhookUrl?: string };
}

export type DemoSystem =
  | 'hubspot-a'
  | 'hubspot-b'
  | 'google-calendar'
  | 'gmail'
  | 'google-tasks'
  | 'microsoft-calendar'
  | 'microsoft-mail'
  | 'microsoft-todo';

export interface OAuthCredentials {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
}

export interface DemoPortal {
  key: 'a' | 'b';
  label: 'CRM A' | 'CRM B';
  portalId: number;
  /** What to connect with: `externalAccountId` is the portal id as a string. */
  externalAccountId: string;
  credentials: OAuthCredentials;
  clientId: string;
  owners: HubspotOwner[];
  /** Ground-truth key (person id, company key, deal key) → HubSpot record id. */
  ids: {
    contacts: Record<string, string>;
    companies: Record<string, string>;
    deals: Record<string, string>;
    /** Meetings logged in this CRM by hand (planted duplicates of calendar events), by meeting key. */
    meetings: Record<string, string>;
  };
  counts: { contacts: number; companies: number; deals: number; meetings: number; associations: number };
}

/** CRM C: installed with the app, not connected. */
export interface DemoSparePortal {
  label: 'CRM C';
  portalId: number;
  /** For scripts and tests that connect it without the consent page. */
  externalAccountId: string;
  credentials: OAuthCredentials;
  counts: { contacts: number; companies: number; alsoInAOrB: number; otherJobTitle: number; own: number };
}

/** People only CRM C holds (so its dry run has new records to show). */
const SPARE_OWN_PEOPLE = [
  {
    firstname: 'Ingrid',
    lastname: 'Solberg',
    email: 'ingrid.solberg@fjordline.example',
    jobtitle: 'Procurement Lead',
  },
  { firstname: 'Tomas', lastname: 'Herrera', email: 'tomas.herrera@altiplano.example', jobtitle: 'CFO' },
  {
    firstname: 'Yuki',
    lastname: 'Tanabe',
    email: 'yuki.tanabe@kumo-systems.example',
    jobtitle: 'IT Director',
  },
] as const;

export interface DemoGoogleUser {
  email: string;
  displayName: string;
  /** What to connect Calendar, Gmail and Tasks with: `externalAccountId` is the email. */
  externalAccountId: string;
  credentials: OAuthCredentials;
  clientId: string;
  clientSecret: string;
  counts: { events: number; threads: number; messages: number; tasks: number; completedTasks: number };
}

export interface DemoPerson {
  id: string;
  firstName: string;
  lastName: string;
  culture: string;
  email: string;
  /** E.164. */
  phone: string;
  companyKey: string;
  jobTitle: string;
  in: Array<'a' | 'b'>;
}

export interface DemoCompany {
  key: string;
  name: string;
  domain: string;
  country: string;
  industry: string;
}

export interface PlantedRecord {
  system: DemoSystem;
  id: string;
  values: Record<string, string>;
}

export interface PlantedDuplicate {
  kind: 'contact' | 'company' | 'deal' | 'meeting';
  /** The ground-truth entity (person id, company key, deal key, meeting key). */
  key: string;
  /** What ties the records together, as a matcher would see it. */
  matchBy: 'email' | 'phone' | 'domain' | 'name' | 'time+title';
  description: string;
  records: PlantedRecord[];
}

export interface PlantedEdit {
  system: DemoSystem;
  portalId: number;
  id: string;
  value: string;
  /** When the edit happened at the source (the record's updatedAt after the edit). */
  at: string;
}

export interface PlantedConflict {
  kind: 'deal-stage' | 'contact-jobtitle';
  key: string;
  field: string;
  description: string;
  before: string;
  /** In the order they were made: the last one is the latest by event time. */
  edits: PlantedEdit[];
  latest: DemoSystem;
  applied: boolean;
}

export interface DemoWorld {
  seed: number;
  anchor: string;
  app: DemoHubspotApp;
  portals: { a: DemoPortal; b: DemoPortal };
  google: DemoGoogleUser;
  /** With `sparePortal`: CRM C, for an admin to connect. */
  spare: DemoSparePortal | null;
  people: DemoPerson[];
  companies: DemoCompany[];
  duplicates: PlantedDuplicate[];
  conflicts: PlantedConflict[];
  counts: {
    people: number;
    onlyA: number;
    onlyB: number;
    inBoth: number;
    companies: number;
    deals: number;
    events: number;
    messages: number;
    tasks: number;
  };
  /** Makes the planted conflicting edits (when seeded with `conflicts: 'deferred'`); idempotent. */
  applyConflicts(): Promise<PlantedConflict[]>;
}

// ---------------------------------------------------------------------------------------
// Vocabulary

interface Culture {
  name: string;
  first: string[];
  last: string[];
  phone: (rng: Rng) => string;
}

class Rng extends Mulberry32 {
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(0, 9));
    return s;
  }
}

const US_AREAS = ['415', '212', '646', '312', '617', '206', '512', '303', '404', '213'];

// Phones in E.164. US numbers use the fictional 555-01xx block, UK the Ofcom drama range,
// France 01 99 00, Australia 02 5550; elsewhere plausible shapes.
const CULTURES: Culture[] = [
  {
    name: 'American',
    first: ['Emily', 'Michael', 'Ashley', 'Tyler', 'Jessica', 'Brandon', 'Megan', 'Jordan'],
    last: ['Johnson', 'Miller', 'Davis', 'Anderson', 'Thompson', 'Walker', 'Carter', 'Brooks'],
    phone: (r) => `+1${r.pick(US_AREAS)}55501${r.digits(2)}`,
  },
  {
    name: 'British',
    first: ['Oliver', 'Charlotte', 'Harry', 'Imogen', 'George', 'Poppy', 'Alfie', 'Eleanor'],
    last: ['Whitaker', 'Pemberton', 'Hughes', 'Fletcher', 'Ashworth', 'Clarke', 'Barnes', 'Holloway'],
    phone: (r) => `+4420794600${r.digits(2)}`,
  },
  {
    name: 'Irish',
    first: ['Siobhán', 'Ciarán', 'Aoife', 'Pádraig', 'Niamh', 'Eoin'],
    last: ["O'Brien", 'Ó Súilleabháin', 'Murphy', 'Gallagher', "O'Connell", 'Byrne'],
    phone: (r) => `+3531${r.digits(7)}`,
  },
  {
    name: 'Mexican',
    first: ['José', 'María', 'Alejandro', 'Guadalupe', 'Santiago', 'Ximena', 'Jesús', 'Lucía'],
    last: ['García', 'Hernández', 'López', 'Martínez', 'Ramírez', 'Núñez', 'Peña', 'Villaseñor'],
    phone: (r) => `+5255${r.digits(8)}`,
  },
  {
    name: 'Brazilian',
    first: ['João', 'Ana', 'Thiago', 'Beatriz', 'Gonçalo', 'Letícia'],
    last: ['Silva', 'Conceição', 'Araújo', 'Gonçalves', 'Brandão', 'Magalhães'],
    phone: (r) => `+55119${r.digits(8)}`,
  },
  {
    name: 'German',
    first: ['Jürgen', 'Anneliese', 'Lukas', 'Sophie', 'Matthias', 'Lena'],
    last: ['Müller', 'Schröder', 'Weiß', 'Brückner', 'Hoffmann', 'Köhler'],
    phone: (r) => `+4930${r.digits(8)}`,
  },
  {
    name: 'French',
    first: ['Élodie', 'Théo', 'Chloé', 'Grégoire', 'Inès', 'Raphaël'],
    last: ['Lefèvre', 'Dubois', 'Moreau', 'Béranger', 'Girard', 'Rousseau'],
    phone: (r) => `+33199000${r.digits(3)}`,
  },
  {
    name: 'Polish',
    first: ['Łukasz', 'Agnieszka', 'Paweł', 'Małgorzata', 'Wojciech', 'Zofia'],
    last: ['Kowalski', 'Wiśniewska', 'Wójcik', 'Zieliński', 'Łuczak', 'Dąbrowska'],
    phone: (r) => `+4850${r.digits(7)}`,
  },
  {
    name: 'Scandinavian',
    first: ['Søren', 'Astrid', 'Björn', 'Ingrid', 'Mikkel', 'Freja'],
    last: ['Jørgensen', 'Lindqvist', 'Åberg', 'Nørgaard', 'Halvorsen', 'Sjöberg'],
    phone: (r) => `+4670${r.digits(7)}`,
  },
  {
    name: 'Turkish',
    first: ['Elif', 'Mehmet', 'Zeynep', 'Barış', 'Ayşe', 'Emre'],
    last: ['Yılmaz', 'Şahin', 'Öztürk', 'Çelik', 'Doğan', 'Aydın'],
    phone: (r) => `+90532${r.digits(7)}`,
  },
  {
    name: 'Nigerian',
    first: ['Chinonso', 'Adaeze', 'Oluwaseun', 'Ngozi', 'Babatunde', 'Folake', 'Emeka', 'Yetunde'],
    last: ['Okafor', 'Adeyemi', 'Nwosu', 'Balogun', 'Eze', 'Ogunleye', 'Chukwu', 'Adebayo'],
    phone: (r) => `+234803${r.digits(7)}`,
  },
  {
    name: 'Ghanaian',
    first: ['Kwame', 'Akosua', 'Kofi', 'Abena', 'Yaw', 'Efua'],
    last: ['Mensah', 'Asante', 'Boateng', 'Owusu', 'Agyeman', 'Ofori'],
    phone: (r) => `+23324${r.digits(7)}`,
  },
  {
    name: 'Kenyan',
    first: ['Wanjiru', 'Otieno', 'Achieng', 'Kamau', 'Njeri', 'Mwangi'],
    last: ['Kariuki', 'Odhiambo', 'Wambui', 'Kiprono', 'Mutua', 'Chebet'],
    phone: (r) => `+2547${r.digits(8)}`,
  },
  {
    name: 'Egyptian',
    first: ['Youssef', 'Nour', 'Omar', 'Mariam', 'Karim', 'Salma'],
    last: ['El-Sayed', 'Abdel-Rahman', 'Mansour', 'Farouk', 'Hassan', 'Naguib'],
    phone: (r) => `+2010${r.digits(8)}`,
  },
  {
    name: 'Indian',
    first: ['Priya', 'Arjun', 'Ananya', 'Rohan', 'Lakshmi', 'Vikram', 'Deepika', 'Siddharth'],
    last: ['Sharma', 'Iyer', 'Patel', 'Reddy', 'Chatterjee', 'Nair', 'Gupta', 'Menon'],
    phone: (r) => `+9198${r.digits(8)}`,
  },
  {
    name: 'Chinese',
    first: ['Wei', 'Xiaoling', 'Jun', 'Mei', 'Hao', 'Yan'],
    last: ['Zhang', 'Wang', 'Li', 'Chen', 'Liu', 'Zhou'],
    phone: (r) => `+86138${r.digits(8)}`,
  },
  {
    name: 'Japanese',
    first: ['Haruto', 'Yui', 'Sōta', 'Aoi', 'Ren', 'Sakura'],
    last: ['Satō', 'Suzuki', 'Takahashi', 'Tanaka', 'Itō', 'Watanabe'],
    phone: (r) => `+813${r.digits(8)}`,
  },
  {
    name: 'Korean',
    first: ['Min-jun', 'Seo-yeon', 'Ji-ho', 'Ha-eun', 'Do-yun', 'Su-bin'],
    last: ['Kim', 'Lee', 'Park', 'Choi', 'Jung', 'Kang'],
    phone: (r) => `+8210${r.digits(8)}`,
  },
  {
    name: 'Vietnamese',
    first: ['Minh', 'Linh', 'Đức', 'Thảo', 'Quang', 'Hương'],
    last: ['Nguyễn', 'Trần', 'Lê', 'Phạm', 'Võ', 'Đặng'],
    phone: (r) => `+8490${r.digits(7)}`,
  },
  {
    name: 'Australian',
    first: ['Lachlan', 'Matilda', 'Hamish', 'Isla', 'Cooper', 'Zoë'],
    last: ['McKenzie', 'Fraser', 'Campbell', 'Sinclair', 'Doherty', 'Kowalczyk'],
    phone: (r) => `+6125550${r.digits(4)}`,
  },
];

// [key, name, domain, country, industry]
const COMPANIES: Array<[string, string, string, string, string]> = [
  ['acme', 'Acme Analytics', 'acme.co.uk', 'GB', 'Software'],
  ['globex', 'Globex Logistics', 'globex.com', 'US', 'Logistics'],
  ['initech', 'Initech', 'initech.io', 'US', 'Software'],
  ['umbrella', 'Umbrella Biotech', 'umbrella-bio.de', 'DE', 'Biotechnology'],
  ['hooli', 'Hooli Cloud', 'hooli.com', 'US', 'Internet'],
  ['wayne', 'Wayne Freight', 'waynefreight.com', 'US', 'Logistics'],
  ['soylent', 'Soylent Foods', 'soylent.com.au', 'AU', 'Food & Beverage'],
  ['tyrell', 'Tyrell Robotics', 'tyrell.ai', 'US', 'Robotics'],
  ['cyberdyne', 'Cyberdyne Systems', 'cyberdyne.co.jp', 'JP', 'Electronics'],
  ['gringotts', 'Gringotts Capital', 'gringotts.co.uk', 'GB', 'Financial Services'],
  ['vandelay', 'Vandelay Industries', 'vandelay.com', 'US', 'Import/Export'],
  ['piedpiper', 'Pied Piper', 'piedpiper.com', 'US', 'Software'],
  ['massive', 'Massive Dynamic', 'massivedynamic.com', 'US', 'Research'],
  ['aperture', 'Aperture Labs', 'aperturelabs.com', 'US', 'Research'],
  ['monarch', 'Monarch Soluções', 'monarch.com.br', 'BR', 'Consulting'],
  ['sakura', 'Sakura Textiles', 'sakura-textiles.co.jp', 'JP', 'Textiles'],
  ['vayu', 'Vayu Renewables', 'vayu.in', 'IN', 'Energy'],
  ['savanna', 'Savanna Mobile', 'savanna.co.ke', 'KE', 'Telecommunications'],
  ['cenote', 'Grupo Cenote', 'cenote.com.mx', 'MX', 'Hospitality'],
  ['wisla', 'Wisła Data', 'wisladata.pl', 'PL', 'Software'],
  ['fjall', 'Fjäll Outdoor', 'fjall.se', 'SE', 'Retail'],
  ['bogazici', 'Boğaziçi Lojistik', 'bogazici-lojistik.com.tr', 'TR', 'Logistics'],
  ['songhong', 'Sông Hồng Tech', 'songhong.vn', 'VN', 'Software'],
  ['hanbit', 'Hanbit Semiconductors', 'hanbit.co.kr', 'KR', 'Semiconductors'],
  ['claddagh', 'Claddagh Health', 'claddagh.ie', 'IE', 'Healthcare'],
  ['nile', 'Nile Analytics', 'nileanalytics.com.eg', 'EG', 'Software'],
  ['lumiere', 'Maison Lumière', 'maison-lumiere.fr', 'FR', 'Luxury Goods'],
  ['brueckner', 'Brückner Maschinenbau', 'brueckner-maschinen.de', 'DE', 'Machinery'],
  ['araucaria', 'Araucária Energia', 'araucaria.com.br', 'BR', 'Energy'],
  ['mapleridge', 'Maple Ridge Insurance', 'mapleridge.ca', 'CA', 'Insurance'],
  ['olivar', 'Olivar Foods', 'olivar.es', 'ES', 'Food & Beverage'],
  ['dijkstra', 'Dijkstra Water', 'dijkstra-water.nl', 'NL', 'Utilities'],
  ['wattle', 'Wattle Financial', 'wattle.com.au', 'AU', 'Financial Services'],
  ['kente', 'Kente Digital', 'kente.com.gh', 'GH', 'Marketing'],
  ['ireti', 'Ìrètí Payments', 'iretipay.com.ng', 'NG', 'Fintech'],
  ['lotus', 'Lotus Medical Devices', 'lotusmed.cn', 'CN', 'Medical Devices'],
];

const TITLES = [
  'VP of Sales',
  'Head of Procurement',
  'CTO',
  'Operations Manager',
  'Director of Engineering',
  'CFO',
  'Account Manager',
  'Chief Revenue Officer',
  'IT Manager',
  'Head of Partnerships',
  'Product Lead',
  'Purchasing Coordinator',
];

const STAGES = [
  'appointmentscheduled',
  'qualifiedtobuy',
  'presentationscheduled',
  'decisionmakerboughtin',
  'contractsent',
  'closedwon',
  'closedlost',
] as const;
const PRODUCTS = [
  'Platform licence',
  'Data migration',
  'Annual renewal',
  'Pilot',
  'Enterprise upgrade',
  'Support plan',
];
const MEETING_KINDS = [
  'Intro call',
  'Discovery',
  'Product demo',
  'Pricing review',
  'QBR',
  'Contract walkthrough',
];
const MAIL_SUBJECTS = [
  'Following up on our call',
  'Proposal for {company}',
  'Quick question about pricing',
  'Next steps',
  'Intro: {company} x Brightwave',
  'Renewal terms',
  'Notes from today',
];

// ---------------------------------------------------------------------------------------
// Helpers

const ASCII_FOLD: Record<string, string> = {
  ł: 'l',
  Ł: 'L',
  ø: 'o',
  Ø: 'O',
  æ: 'ae',
  ß: 'ss',
  đ: 'd',
  Đ: 'D',
  ı: 'i',
};

/** "Ó Súilleabháin" → "osuilleabhain"; "Nguyễn" → "nguyen". */
export function emailSlug(name: string): string {
  return [...name]
    .map((c) => ASCII_FOLD[c] ?? c)
    .join('')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** Another way to type the same address: case games a mail client or a person would play. */
function mixedCase(email: string, rng: Rng): string {
  const [local = '', domain = ''] = email.split('@');
  const cap = (s: string) =>
    s
      .split(/([.\-_])/)
      .map((p) => (p.length > 0 ? p[0]!.toUpperCase() + p.slice(1) : p))
      .join('');
  switch (rng.int(0, 3)) {
    case 0:
      return `${cap(local)}@${domain}`;
    case 1:
      return `${local}@${domain.toUpperCase()}`;
    case 2:
      return `${cap(local)}@${cap(domain)}`;
    default:
      return email.toUpperCase();
  }
}

/** Formats an E.164 number the way CRM A (international) or CRM B (national/compact) shows it. */
function formatPhone(e164: string, style: 'international' | 'other', rng: Rng): string {
  if (e164.startsWith('+1')) {
    const [area, exch, line] = [e164.slice(2, 5), e164.slice(5, 8), e164.slice(8)];
    if (style === 'international') return `+1 ${area} ${exch} ${line}`;
    return rng.pick([
      `(${area}) ${exch}-${line}`,
      `${area}.${exch}.${line}`,
      `${area}-${exch}-${line}`,
      e164,
    ]);
  }
  if (e164.startsWith('+44')) {
    const n = e164.slice(3);
    if (style === 'international') return `+44 ${n.slice(0, 2)} ${n.slice(2, 6)} ${n.slice(6)}`;
    return rng.pick([`0${n.slice(0, 2)} ${n.slice(2, 6)} ${n.slice(6)}`, e164]);
  }
  // Elsewhere: country code, then groups of digits (A) or compact / dashed (B).
  const cc = COUNTRY_CODES.find((code) => e164.startsWith(`+${code}`)) ?? e164.slice(1, 3);
  const groups = groupDigits(e164.slice(1 + cc.length));
  if (style === 'international') return `+${cc} ${groups.join(' ')}`;
  return rng.pick([e164, `+${cc}-${groups.join('-')}`]);
}

const COUNTRY_CODES = [
  '353',
  '234',
  '233',
  '254',
  '1',
  '44',
  '52',
  '55',
  '49',
  '33',
  '48',
  '46',
  '90',
  '20',
  '91',
]
  .concat(['86', '81', '82', '84', '61'])
  .sort((x, y) => y.length - x.length);

/** "1007560412" → ["10", "0756", "0412"]: a short lead, then fours (a three where they do not fit). */
function groupDigits(digits: string): string[] {
  const lead = digits.length % 4 === 0 ? 2 : digits.length % 4 === 1 ? 1 : digits.length % 4;
  const groups = [digits.slice(0, lead)];
  let rest = digits.slice(lead);
  if (lead === 2 && digits.length % 4 === 0) {
    groups.push(rest.slice(0, 2));
    rest = rest.slice(2);
  }
  for (let i = 0; i < rest.length; i += 4) groups.push(rest.slice(i, i + 4));
  return groups.filter((g) => g.length > 0);
}

/** CRM B's habit for company domains: a www., a mail subdomain, or a URL. */
function domainVariant(domain: string, rng: Rng): string {
  return rng.pick([
    `www.${domain}`,
    `mail.${domain}`,
    `https://www.${domain}/`,
    `WWW.${domain.toUpperCase()}`,
  ]);
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Business hours (UTC) on a weekday `dayOffset` days from the anchor, at a rounded time. */
function meetingTime(anchorMs: number, dayOffset: number, rng: Rng): number {
  let day = Math.floor(anchorMs / DAY) * DAY + dayOffset * DAY;
  while ([0, 6].includes(new Date(day).getUTCDay())) day += DAY;
  return day + rng.int(8, 16) * HOUR + rng.pick([0, 15, 30, 45]) * 60_000;
}

// ---------------------------------------------------------------------------------------
// The plan: a pure function of the options

interface PlannedDeal {
  key: string;
  name: string;
  companyKey: string;
  contactIds: string[];
  amount: number;
  stage: string;
  closeDate: string;
  ownerIndex: number;
  in: Array<'a' | 'b'>;
}

interface PlannedMeeting {
  key: string;
  summary: string;
  start: number;
  minutes: number;
  attendees: Array<{ personId: string; email: string; displayName: string }>;
  location: string;
  /** Also logged as a HubSpot meeting in this portal (a planted cross-system duplicate). */
  alsoInHubspot?: 'a' | 'b';
}

interface PlannedMail {
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  date: string;
  messageId: string;
  inReplyTo?: string;
  text: string;
}

interface PlannedTask {
  title: string;
  notes: string;
  due: string;
  completed: boolean;
}

export interface DemoWorldPlan {
  seed: number;
  anchor: string;
  portalIds: { a: number; b: number };
  userEmail: string;
  userName: string;
  people: DemoPerson[];
  companies: DemoCompany[];
  /** How each CRM spells a person or company that both hold. */
  variants: {
    phone: Record<string, { a: string; b: string }>;
    email: Record<string, { a: string; b: string }>;
    companyDomain: Record<string, { a: string; b: string }>;
    companyName: Record<string, { a: string; b: string }>;
  };
  /** People in both CRMs under another email in B (same name and phone). */
  otherEmailInB: Record<string, string>;
  deals: PlannedDeal[];
  meetings: PlannedMeeting[];
  threads: PlannedMail[][];
  tasks: PlannedTask[];
  conflictPlan: Array<{
    kind: 'deal-stage' | 'contact-jobtitle';
    key: string;
    field: string;
    a: string;
    b: string;
    /** Which CRM edits last. */
    last: 'a' | 'b';
  }>;
}

/** Everything seedDemoWorld will create, decided from the seed alone (no I/O). */
export function planDemoWorld(options: DemoWorldOptions = {}): DemoWorldPlan {
  const seed = options.seed ?? 1;
  const rng = new Rng(seed * 2654435761);
  const peopleCount = options.people ?? 300;
  const anchor = options.anchor ?? DEMO_ANCHOR;
  const anchorMs = Date.parse(anchor);
  const base = 20_000_000 + (Math.abs(seed) % 1_000_000) * 2;
  const portalIds = options.portalIds ?? { a: base, b: base + 1 };
  const userEmail = (options.userEmail ?? 'dana.okafor@brightwave.io').toLowerCase();
  const userName = options.userEmail ? userEmail.split('@')[0]! : 'Dana Okafor';

  // Enough companies for the people (about 8 each), at least 4.
  const companyCount = Math.max(4, Math.min(COMPANIES.length, Math.ceil(peopleCount / 8)));
  const companyRows = [...COMPANIES];
  for (let i = companyRows.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [companyRows[i], companyRows[j]] = [companyRows[j]!, companyRows[i]!];
  }
  const companies: DemoCompany[] = companyRows
    .slice(0, companyCount)
    .map(([key, name, domain, country, industry]) => ({ key, name, domain, country, industry }));

  const usedEmails = new Set<string>();
  const usedPhones = new Set<string>();
  const people: DemoPerson[] = [];
  for (let i = 0; i < peopleCount; i++) {
    const culture = rng.pick(CULTURES);
    const firstName = rng.pick(culture.first);
    const lastName = rng.pick(culture.last);
    const company = companies[i < companies.length ? i : rng.int(0, companies.length - 1)]!;
    const style = rng.int(0, 3);
    const f = emailSlug(firstName);
    const l = emailSlug(lastName);
    let local = style === 0 ? `${f[0]}${l}` : style === 1 ? `${f}` : `${f}.${l}`;
    let email = `${local}@${company.domain}`;
    for (let n = 2; usedEmails.has(email); n++) {
      local = `${f}.${l}${n}`;
      email = `${local}@${company.domain}`;
    }
    usedEmails.add(email);
    let phone = culture.phone(rng);
    while (usedPhones.has(phone)) phone = culture.phone(rng);
    usedPhones.add(phone);
    const roll = rng.next();
    const where: Array<'a' | 'b'> = roll < 0.4 ? ['a'] : roll < 0.72 ? ['b'] : ['a', 'b'];
    people.push({
      id: `p${String(i + 1).padStart(3, '0')}`,
      firstName,
      lastName,
      culture: culture.name,
      email,
      phone,
      companyKey: company.key,
      jobTitle: rng.pick(TITLES),
      in: where,
    });
  }
  // At least a few people in both CRMs, however small the world.
  for (const p of people.slice(0, Math.min(4, people.length))) p.in = ['a', 'b'];

  const variants: DemoWorldPlan['variants'] = { phone: {}, email: {}, companyDomain: {}, companyName: {} };
  const otherEmailInB: Record<string, string> = {};
  const both = people.filter((p) => p.in.length === 2);
  both.forEach((p, k) => {
    variants.phone[p.id] = {
      a: formatPhone(p.phone, 'international', rng),
      b: formatPhone(p.phone, 'other', rng),
    };
    variants.email[p.id] = { a: p.email, b: mixedCase(p.email, rng) };
    // Every eighth shared person is in B under a personal address: only name and phone match.
    if (k % 8 === 3) {
      otherEmailInB[p.id] =
        `${emailSlug(p.firstName)}.${emailSlug(p.lastName)}${rng.int(10, 99)}@fastmail.example`;
    }
  });

  const companyIn = (c: DemoCompany, key: 'a' | 'b') =>
    people.some((p) => p.companyKey === c.key && p.in.includes(key));
  for (const c of companies) {
    if (companyIn(c, 'a') && companyIn(c, 'b')) {
      variants.companyDomain[c.key] = { a: c.domain, b: domainVariant(c.domain, rng) };
      variants.companyName[c.key] = {
        a: c.name,
        b: rng.pick([c.name, c.name.toUpperCase(), `${c.name} ${c.country === 'GB' ? 'Ltd' : 'Inc.'}`]),
      };
    }
  }

  // Deals: about one per four people, on the CRMs that hold the company.
  const deals: PlannedDeal[] = [];
  const dealCount = Math.max(3, Math.round(peopleCount / 4));
  for (let i = 0; i < dealCount; i++) {
    const company = companies[i % companies.length]!;
    const staff = people.filter((p) => p.companyKey === company.key);
    const inA = staff.filter((p) => p.in.includes('a'));
    const inB = staff.filter((p) => p.in.includes('b'));
    const options: Array<'a' | 'b'> = [];
    if (inA.length) options.push('a');
    if (inB.length) options.push('b');
    if (options.length === 0) continue;
    const where: Array<'a' | 'b'> =
      options.length === 2 && rng.chance(0.3) ? ['a', 'b'] : [rng.pick(options)];
    const pool = where.length === 2 ? staff.filter((p) => p.in.length === 2) : where[0] === 'a' ? inA : inB;
    const contacts = (pool.length ? pool : where[0] === 'a' ? inA : inB).slice(0, rng.int(1, 2));
    if (where.length === 2 && !contacts.every((p) => p.in.length === 2)) where.splice(1);
    deals.push({
      key: `d${String(i + 1).padStart(3, '0')}`,
      name: `${company.name} — ${rng.pick(PRODUCTS)} ${new Date(anchorMs).getUTCFullYear() + rng.int(0, 1)}`,
      companyKey: company.key,
      contactIds: contacts.map((p) => p.id),
      amount: rng.int(4, 240) * 500,
      stage: rng.pick(STAGES.slice(0, 5)),
      closeDate: isoDay(anchorMs + rng.int(-20, 120) * DAY),
      ownerIndex: rng.int(0, 2),
      in: where,
    });
  }
  // Shared deals are what conflicts are made of: make sure there are some.
  const sharedPeople = people.filter((p) => p.in.length === 2);
  let sharedDeals = deals.filter((d) => d.in.length === 2);
  for (const d of deals) {
    if (sharedDeals.length >= 3) break;
    if (d.in.length === 2) continue;
    const contact = sharedPeople.find((p) => p.companyKey === d.companyKey);
    if (!contact) continue;
    d.in = ['a', 'b'];
    d.contactIds = [contact.id];
    sharedDeals = deals.filter((x) => x.in.length === 2);
  }

  const conflictPlan: DemoWorldPlan['conflictPlan'] = [];
  for (const d of sharedDeals.slice(0, 3)) {
    const later = STAGES.filter((s) => s !== d.stage);
    const a = rng.pick(later);
    const b = rng.pick(later.filter((s) => s !== a));
    conflictPlan.push({
      kind: 'deal-stage',
      key: d.key,
      field: 'dealstage',
      a,
      b,
      last: rng.pick(['a', 'b']),
    });
  }
  const titled = sharedPeople.find((p) => !otherEmailInB[p.id]);
  if (titled) {
    const others = TITLES.filter((t) => t !== titled.jobTitle);
    const a = rng.pick(others);
    conflictPlan.push({
      kind: 'contact-jobtitle',
      key: titled.id,
      field: 'jobtitle',
      a,
      b: rng.pick(others.filter((t) => t !== a)),
      last: rng.pick(['a', 'b']),
    });
  }

  // Calendar: meetings with the people, from four weeks back to two weeks ahead.
  const meetings: PlannedMeeting[] = [];
  const meetingCount = options.meetings ?? Math.max(3, Math.round(peopleCount / 5));
  for (let i = 0; i < meetingCount; i++) {
    const lead = people[rng.int(0, people.length - 1)]!;
    const colleagues = people.filter((p) => p.companyKey === lead.companyKey && p.id !== lead.id);
    const invited = [lead, ...colleagues.slice(0, rng.int(0, Math.min(2, colleagues.length)))];
    const company = companies.find((c) => c.key === lead.companyKey)!;
    meetings.push({
      key: `m${String(i + 1).padStart(3, '0')}`,
      summary: `${rng.pick(MEETING_KINDS)}: ${company.name}`,
      start: meetingTime(anchorMs, rng.int(-28, 14), rng),
      minutes: rng.pick([30, 30, 45, 60]),
      attendees: invited.map((p) => ({
        personId: p.id,
        email: rng.chance(0.5) ? mixedCase(p.email, rng) : p.email,
        displayName: `${p.firstName} ${p.lastName}`,
      })),
      location: rng.chance(0.6) ? 'Google Meet' : `${company.name} office`,
    });
  }
  // A few meetings were also logged in a CRM by hand: the same meeting twice.
  for (const m of meetings.slice(0, Math.min(3, meetings.length))) {
    const lead = people.find((p) => p.id === m.attendees[0]!.personId)!;
    m.alsoInHubspot = lead.in[0];
  }

  // Mail: threads of one to three messages, before the anchor.
  const threads: PlannedMail[][] = [];
  const threadCount = options.threads ?? Math.max(3, Math.round(peopleCount / 4));
  const me = `${userName} <${userEmail}>`;
  for (let i = 0; i < threadCount; i++) {
    const person = people[rng.int(0, people.length - 1)]!;
    const company = companies.find((c) => c.key === person.companyKey)!;
    const them = `${person.firstName} ${person.lastName} <${rng.chance(0.5) ? mixedCase(person.email, rng) : person.email}>`;
    const subject = rng.pick(MAIL_SUBJECTS).replace('{company}', company.name);
    const length = rng.int(1, 3);
    let at = anchorMs - rng.int(1, 45) * DAY + rng.int(7, 18) * HOUR;
    const thread: PlannedMail[] = [];
    let fromThem = rng.chance(0.5);
    for (let j = 0; j < length; j++) {
      const messageId = `<demo-${seed}-t${i + 1}-m${j + 1}@${fromThem ? company.domain : 'brightwave.io'}>`;
      thread.push({
        from: fromThem ? them : me,
        to: [fromThem ? me : them],
        cc: [],
        subject: j === 0 ? subject : `Re: ${subject}`,
        date: new Date(at).toISOString(),
        messageId,
        inReplyTo: thread[j - 1]?.messageId,
        text: fromThem
          ? `Hi ${userName.split(' ')[0]},\n\nThanks for the follow-up. ${rng.pick(['Could you send the pricing sheet?', 'Let us find a time next week.', 'The team liked the demo.', 'Legal is reviewing the terms.'])}\n\n${person.firstName}`
          : `Hi ${person.firstName},\n\n${rng.pick(['Great speaking today.', 'Attaching the proposal we discussed.', 'Just checking in on the contract.', 'Happy to set up a technical deep dive.'])}\n\nBest,\n${userName}`,
      });
      at += rng.int(1, 48) * HOUR;
      fromThem = !fromThem;
    }
    threads.push(thread);
  }

  const tasks: PlannedTask[] = [];
  const taskCount = options.tasks ?? Math.max(6, Math.round(peopleCount / 20));
  for (let i = 0; i < taskCount; i++) {
    const person = people[rng.int(0, people.length - 1)]!;
    const company = companies.find((c) => c.key === person.companyKey)!;
    const verb = rng.pick([
      'Send proposal to',
      'Follow up with',
      'Book a demo with',
      'Call',
      'Share case study with',
    ]);
    tasks.push({
      title: `${verb} ${person.firstName} ${person.lastName} (${company.name})`,
      notes: `${person.email} · ${formatPhone(person.phone, 'international', rng)}`,
      due: `${isoDay(anchorMs + rng.int(-7, 21) * DAY)}T00:00:00.000Z`,
      completed: rng.chance(0.25),
    });
  }

  return {
    seed,
    anchor,
    portalIds,
    userEmail,
    userName,
    people,
    companies,
    variants,
    otherEmailInB,
    deals,
    meetings,
    threads,
    tasks,
    conflictPlan,
  };
}

// ---------------------------------------------------------------------------------------
// Seeding

/** Builds the planned world in the emulators at `emulatorUrls` and says what it made. */
export async function seedDemoWorld(
  emulatorUrls: EmulatorUrls,
  options: DemoWorldOptions = {},
): Promise<DemoWorld> {
  const plan = planDemoWorld(options);
  const app = options.app ?? DEMO_HUBSPOT_APP;
  const emu = emulatorClient(emulatorUrls);
  const anchorMs = Date.parse(plan.anchor);
  const personById = new Map(plan.people.map((p) => [p.id, p]));
  const companyByKey = new Map(plan.companies.map((c) => [c.key, c]));

  const seedPortal = async (key: 'a' | 'b'): Promise<DemoPortal> => {
    const portalId = plan.portalIds[key];
    const grant = await emu.hubspot.createPortal({
      portalId,
      appId: app.appId,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
    });
    const owners = await emu.hubspot.owners(grant.accessToken);
    const ids: DemoPortal['ids'] = { contacts: {}, companies: {}, deals: {}, meetings: {} };
    let associations = 0;
    let meetings = 0;

    for (const c of plan.companies) {
      if (!plan.people.some((p) => p.companyKey === c.key && p.in.includes(key))) continue;
      const rec = await emu.hubspot.ui.create(portalId, 'companies', {
        name: plan.variants.companyName[c.key]?.[key] ?? c.name,
        domain: plan.variants.companyDomain[c.key]?.[key] ?? c.domain,
        country: c.country,
        industry: c.industry,
      });
      ids.companies[c.key] = rec.id;
    }
    for (const p of plan.people) {
      if (!p.in.includes(key)) continue;
      const company = companyByKey.get(p.companyKey)!;
      const email =
        key === 'b' && plan.otherEmailInB[p.id]
          ? plan.otherEmailInB[p.id]!
          : (plan.variants.email[p.id]?.[key] ?? p.email);
      const properties: PropertyValues = {
        email,
        firstname: p.firstName,
        lastname: p.lastName,
        phone: plan.variants.phone[p.id]?.[key] ?? p.phone,
        jobtitle: p.jobTitle,
        company: plan.variants.companyName[company.key]?.[key] ?? company.name,
        lifecyclestage: 'salesqualifiedlead',
      };
      const rec = await emu.hubspot.ui.create(portalId, 'contacts', properties);
      ids.contacts[p.id] = rec.id;
      const companyId = ids.companies[p.companyKey];
      if (companyId) {
        await emu.hubspot.ui.associate(portalId, 'contacts', rec.id, 'companies', companyId);
        associations++;
      }
    }
    for (const d of plan.deals) {
      if (!d.in.includes(key)) continue;
      const owner = owners[d.ownerIndex % Math.max(1, owners.length)];
      const rec = await emu.hubspot.ui.create(
        portalId,
        'deals',
        {
          dealname: d.name,
          amount: String(d.amount),
          dealstage: d.stage,
          pipeline: 'default',
          closedate: `${d.closeDate}T17:00:00.000Z`,
          ...(owner ? { hubspot_owner_id: owner.id } : {}),
        },
        owner?.userId,
      );
      ids.deals[d.key] = rec.id;
      const companyId = ids.companies[d.companyKey];
      if (companyId) {
        await emu.hubspot.ui.associate(portalId, 'deals', rec.id, 'companies', companyId);
        associations++;
      }
      for (const pid of d.contactIds) {
        const contactId = ids.contacts[pid];
        if (!contactId) continue;
        await emu.hubspot.ui.associate(portalId, 'deals', rec.id, 'contacts', contactId);
        associations++;
      }
    }
    for (const m of plan.meetings) {
      if (m.alsoInHubspot !== key) continue;
      const start = new Date(m.start).toISOString();
      const rec = await emu.hubspot.ui.create(portalId, 'meetings', {
        hs_meeting_title: m.summary,
        hs_timestamp: start,
        hs_meeting_start_time: start,
        hs_meeting_end_time: new Date(m.start + m.minutes * 60_000).toISOString(),
        hs_meeting_location: m.location,
        hs_meeting_outcome: m.start < anchorMs ? 'COMPLETED' : 'SCHEDULED',
      });
      meetings++;
      ids.meetings[m.key] = rec.id;
      const contactId = ids.contacts[m.attendees[0]!.personId];
      if (contactId) {
        await emu.hubspot.ui.associate(portalId, 'meetings', rec.id, 'contacts', contactId);
        associations++;
      }
    }
    if (options.webhookUrls?.[key]) await emu.hubspot.setWebhookTarget(portalId, options.webhookUrls[key]!);
    return {
      key,
      label: key === 'a' ? 'CRM A' : 'CRM B',
      portalId,
      externalAccountId: String(portalId),
      credentials: {
        accessToken: grant.accessToken,
        refreshToken: grant.refreshToken,
        expiresAt: new Date(Date.now() + grant.expiresIn * 1000).toISOString(),
      },
      clientId: grant.clientId,
      owners,
      ids,
      counts: {
        contacts: Object.keys(ids.contacts).length,
        companies: Object.keys(ids.companies).length,
        deals: Object.keys(ids.deals).length,
        meetings,
        associations,
      },
    };
  };

  const seedGoogle = async (): Promise<{ user: DemoGoogleUser; eventIds: Record<string, string> }> => {
    const grant = await emu.google.createUser(
      plan.userEmail,
      options.gmailPushUrl ? { pushUrl: options.gmailPushUrl } : {},
    );
    const eventIds: Record<string, string> = {};
    for (const m of plan.meetings) {
      const event = await emu.google.calendar.create(plan.userEmail, {
        summary: m.summary,
        location: m.location,
        description: `Agenda: ${m.summary}`,
        start: { dateTime: new Date(m.start).toISOString() },
        end: { dateTime: new Date(m.start + m.minutes * 60_000).toISOString() },
        attendees: [
          { email: plan.userEmail, displayName: plan.userName, organizer: true, responseStatus: 'accepted' },
          ...m.attendees.map((a) => ({
            email: a.email,
            displayName: a.displayName,
            responseStatus: 'accepted',
          })),
        ],
      });
      eventIds[m.key] = event.id;
    }
    let messages = 0;
    for (const thread of plan.threads) {
      for (const mail of thread) {
        await emu.google.gmail.insert(plan.userEmail, mail);
        messages++;
      }
    }
    let completedTasks = 0;
    for (const t of plan.tasks) {
      const task = await emu.google.tasks.create(plan.userEmail, {
        title: t.title,
        notes: t.notes,
        due: t.due,
      });
      if (t.completed) {
        await emu.google.tasks.complete(plan.userEmail, task.id, new Date(Date.parse(t.due) - DAY));
        completedTasks++;
      }
    }
    return {
      eventIds,
      user: {
        email: plan.userEmail,
        displayName: plan.userName,
        externalAccountId: plan.userEmail,
        credentials: {
          accessToken: grant.accessToken,
          refreshToken: grant.refreshToken,
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        },
        clientId: grant.clientId,
        clientSecret: grant.clientSecret,
        counts: {
          events: plan.meetings.length,
          threads: plan.threads.length,
          messages,
          tasks: plan.tasks.length,
          completedTasks,
        },
      },
    };
  };

  // CRM C: every fourth person (every eighth under another job title) with their companies,
  // and a few people of its own; no deals, meetings or conflicts planted.
  const seedSparePortal = async (webhookUrl: string | undefined): Promise<DemoSparePortal> => {
    // Far from any seed's A and B (which are 20,000,000 + 2 × seed and the next).
    const portalId = plan.portalIds.a + 40_000_000;
    const grant = await emu.hubspot.createPortal({
      portalId,
      appId: app.appId,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
    });
    const chosen = plan.people.filter((_, i) => i % 4 === 0);
    const companyIds = new Map<string, string>();
    for (const key of new Set(chosen.map((p) => p.companyKey))) {
      const company = companyByKey.get(key)!;
      const rec = await emu.hubspot.ui.create(portalId, 'companies', {
        name: company.name,
        domain: company.domain,
        country: company.country,
        industry: company.industry,
      });
      companyIds.set(key, rec.id);
    }
    let otherJobTitle = 0;
    for (const [i, p] of chosen.entries()) {
      const retitled = i % 2 === 1;
      if (retitled) otherJobTitle++;
      const rec = await emu.hubspot.ui.create(portalId, 'contacts', {
        email: p.email,
        firstname: p.firstName,
        lastname: p.lastName,
        phone: p.phone,
        jobtitle: retitled ? `Senior ${p.jobTitle}` : p.jobTitle,
        company: companyByKey.get(p.companyKey)!.name,
        lifecyclestage: 'opportunity',
      });
      await emu.hubspot.ui.associate(
        portalId,
        'contacts',
        rec.id,
        'companies',
        companyIds.get(p.companyKey)!,
      );
    }
    for (const person of SPARE_OWN_PEOPLE) await emu.hubspot.ui.create(portalId, 'contacts', { ...person });
    if (webhookUrl) await emu.hubspot.setWebhookTarget(portalId, webhookUrl);
    return {
      label: 'CRM C',
      portalId,
      externalAccountId: String(portalId),
      credentials: {
        accessToken: grant.accessToken,
        refreshToken: grant.refreshToken,
        expiresAt: new Date(Date.now() + grant.expiresIn * 1000).toISOString(),
      },
      counts: {
        contacts: chosen.length + SPARE_OWN_PEOPLE.length,
        companies: companyIds.size,
        alsoInAOrB: chosen.length,
        otherJobTitle,
        own: SPARE_OWN_PEOPLE.length,
      },
    };
  };

  // Each portal's ids come from its own generator and Google's from another: the three
  // can be seeded at once and stay deterministic.
  const [a, b, google] = await Promise.all([seedPortal('a'), seedPortal('b'), seedGoogle()]);
  const portals = { a, b };
  const spare = options.sparePortal ? await seedSparePortal(options.sparePortal.webhookUrl) : null;

  // ---- what was planted ----
  const duplicates: PlantedDuplicate[] = [];
  for (const p of plan.people.filter((x) => x.in.length === 2)) {
    const other = plan.otherEmailInB[p.id];
    duplicates.push({
      kind: 'contact',
      key: p.id,
      matchBy: other ? 'phone' : 'email',
      description: other
        ? `${p.firstName} ${p.lastName}: work address in CRM A, personal ${other} in CRM B; same name and phone (${plan.variants.phone[p.id]!.a} vs ${plan.variants.phone[p.id]!.b})`
        : `${p.firstName} ${p.lastName}: ${plan.variants.email[p.id]!.a} vs ${plan.variants.email[p.id]!.b} (HubSpot stores emails lower-cased), phone ${plan.variants.phone[p.id]!.a} vs ${plan.variants.phone[p.id]!.b}`,
      records: [
        {
          system: 'hubspot-a',
          id: a.ids.contacts[p.id]!,
          values: { email: plan.variants.email[p.id]!.a, phone: plan.variants.phone[p.id]!.a },
        },
        {
          system: 'hubspot-b',
          id: b.ids.contacts[p.id]!,
          values: { email: other ?? plan.variants.email[p.id]!.b, phone: plan.variants.phone[p.id]!.b },
        },
      ],
    });
  }
  for (const c of plan.companies) {
    const domain = plan.variants.companyDomain[c.key];
    if (!domain) continue;
    duplicates.push({
      kind: 'company',
      key: c.key,
      matchBy: 'domain',
      description: `${c.name}: domain ${domain.a} vs ${domain.b}, name "${plan.variants.companyName[c.key]!.a}" vs "${plan.variants.companyName[c.key]!.b}"`,
      records: [
        { system: 'hubspot-a', id: a.ids.companies[c.key]!, values: { domain: domain.a } },
        { system: 'hubspot-b', id: b.ids.companies[c.key]!, values: { domain: domain.b } },
      ],
    });
  }
  for (const d of plan.deals.filter((x) => x.in.length === 2)) {
    duplicates.push({
      kind: 'deal',
      key: d.key,
      matchBy: 'name',
      description: `deal "${d.name}" is tracked in both CRMs`,
      records: [
        { system: 'hubspot-a', id: a.ids.deals[d.key]!, values: { dealname: d.name } },
        { system: 'hubspot-b', id: b.ids.deals[d.key]!, values: { dealname: d.name } },
      ],
    });
  }
  for (const m of plan.meetings.filter((x) => x.alsoInHubspot)) {
    const portal = portals[m.alsoInHubspot!];
    duplicates.push({
      kind: 'meeting',
      key: m.key,
      matchBy: 'time+title',
      description: `"${m.summary}" on ${new Date(m.start).toISOString()} is in the calendar and logged in ${portal.label}`,
      records: [
        { system: 'google-calendar', id: google.eventIds[m.key]!, values: { summary: m.summary } },
        {
          system: portal.key === 'a' ? 'hubspot-a' : 'hubspot-b',
          id: portal.ids.meetings[m.key]!,
          values: { hs_meeting_title: m.summary },
        },
      ],
    });
  }

  const conflicts: PlantedConflict[] = plan.conflictPlan.map((c) => {
    const deal = plan.deals.find((d) => d.key === c.key);
    const person = personById.get(c.key);
    const what = deal ? `deal "${deal.name}"` : `${person?.firstName} ${person?.lastName}`;
    const before = deal ? deal.stage : (person?.jobTitle ?? '');
    const first = c.last === 'a' ? 'b' : 'a';
    return {
      kind: c.kind,
      key: c.key,
      field: c.field,
      description: `${what}: ${c.field} "${before}" → "${c[first]}" in ${portals[first].label}, then → "${c[c.last]}" in ${portals[c.last].label}`,
      before,
      edits: [],
      latest: c.last === 'a' ? 'hubspot-a' : 'hubspot-b',
      applied: false,
    };
  });

  let applying: Promise<PlantedConflict[]> | undefined;
  const applyConflicts = () => {
    applying ??= (async () => {
      for (const [i, c] of plan.conflictPlan.entries()) {
        const conflict = conflicts[i]!;
        const type = c.kind === 'deal-stage' ? 'deals' : 'contacts';
        const order: Array<'a' | 'b'> = c.last === 'a' ? ['b', 'a'] : ['a', 'b'];
        for (const key of order) {
          const portal = portals[key];
          const id = type === 'deals' ? portal.ids.deals[c.key]! : portal.ids.contacts[c.key]!;
          const rec = await emu.hubspot.ui.update(portal.portalId, type, id, { [c.field]: c[key] });
          conflict.edits.push({
            system: key === 'a' ? 'hubspot-a' : 'hubspot-b',
            portalId: portal.portalId,
            id,
            value: c[key],
            at: rec.updatedAt,
          });
          // Different event times, clearly ordered (the emulators' clock is the wall clock).
          await sleep(25);
        }
        conflict.applied = true;
      }
      return conflicts;
    })();
    return applying;
  };
  if ((options.conflicts ?? 'now') === 'now') await applyConflicts();

  const inBoth = plan.people.filter((p) => p.in.length === 2).length;
  const onlyA = plan.people.filter((p) => p.in.length === 1 && p.in[0] === 'a').length;
  return {
    seed: plan.seed,
    anchor: plan.anchor,
    app,
    portals,
    google: google.user,
    spare,
    people: plan.people,
    companies: plan.companies,
    duplicates,
    conflicts,
    counts: {
      people: plan.people.length,
      onlyA,
      onlyB: plan.people.length - inBoth - onlyA,
      inBoth,
      companies: plan.companies.length,
      deals: plan.deals.length,
      events: plan.meetings.length,
      messages: google.user.counts.messages,
      tasks: plan.tasks.length,
    },
    applyConflicts,
  };
}

/** Lines a demo can print: what was made, the planted duplicates and conflicts. */
export function describeDemoWorld(world: DemoWorld): string[] {
  const { a, b } = world.portals;
  const lines = [
    `${a.label} (portal ${a.portalId}): ${a.counts.contacts} contacts, ${a.counts.companies} companies, ${a.counts.deals} deals`,
    `${b.label} (portal ${b.portalId}): ${b.counts.contacts} contacts, ${b.counts.companies} companies, ${b.counts.deals} deals`,
    `${world.counts.inBoth} of ${world.counts.people} people are in both CRMs`,
    `Google (${world.google.email}): ${world.google.counts.events} meetings, ${world.google.counts.messages} messages in ${world.google.counts.threads} threads, ${world.google.counts.tasks} tasks`,
    `planted duplicates (${world.duplicates.length}):`,
    ...world.duplicates.map((d) => `  - [${d.kind}, by ${d.matchBy}] ${d.description}`),
    `planted conflicts (${world.conflicts.length}):`,
    ...world.conflicts.map((c) => `  - ${c.description}${c.applied ? '' : ' (not applied yet)'}`),
  ];
  return lines;
}
