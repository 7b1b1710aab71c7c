/** What a Gmail search (`q`) can test about a message. */
export interface SearchableMessage {
  from: string;
  to: string;
  cc: string;
  subject: string;
  snippet: string;
  messageId: string;
  labelIds: string[];
  internalDate: number;
}

type Predicate = (m: SearchableMessage) => boolean;

const DAY_MS = 24 * 3600_000;
const UNIT_MS: Record<string, number> = { h: 3600_000, d: DAY_MS, m: 30 * DAY_MS, y: 365 * DAY_MS };

/**
 * A small subset of Gmail's search syntax, enough for connectors' backfill windows:
 * from/to/cc/subject/rfc822msgid, after/before (YYYY/MM/DD or epoch seconds, read as UTC),
 * newer_than/older_than (Nh, Nd, Nm, Ny), label/in/is, and free words. Terms are ANDed; a
 * leading `-` negates one. OR and braces are not understood.
 */
export function compileGmailQuery(q: string, now: number): Predicate {
  const predicates = tokenize(q).map((token) => compileTerm(token, now));
  return (m) => predicates.every((p) => p(m));
}

function tokenize(q: string): string[] {
  return [...q.matchAll(/-?[\w.-]+:"[^"]*"|-?"[^"]*"|\S+/g)].map((m) => m[0]);
}

function compileTerm(token: string, now: number): Predicate {
  if (token.startsWith('-') && token.length > 1) {
    const inner = compileTerm(token.slice(1), now);
    return (m) => !inner(m);
  }
  const colon = token.indexOf(':');
  const op = colon > 0 ? token.slice(0, colon).toLowerCase() : '';
  const value = unquote(colon > 0 ? token.slice(colon + 1) : token).toLowerCase();
  switch (op) {
    case 'from':
    case 'to':
    case 'cc':
    case 'subject':
      return (m) => m[op].toLowerCase().includes(value);
    case 'rfc822msgid':
      return (m) => m.messageId.toLowerCase().replace(/[<>]/g, '') === value.replace(/[<>]/g, '');
    case 'after':
    case 'before': {
      const at = parseSearchDate(value);
      if (at === undefined) return () => false;
      return op === 'after' ? (m) => m.internalDate >= at : (m) => m.internalDate < at;
    }
    case 'newer_than':
    case 'older_than': {
      const match = /^(\d+)([hdmy])$/.exec(value);
      if (!match) return () => false;
      const since = now - Number(match[1]) * (UNIT_MS[match[2] ?? 'd'] ?? DAY_MS);
      return op === 'newer_than' ? (m) => m.internalDate >= since : (m) => m.internalDate < since;
    }
    case 'label':
    case 'in':
      if (value === 'anywhere') return () => true;
      return (m) => m.labelIds.some((l) => l.toLowerCase() === value);
    case 'is':
      return (m) => m.labelIds.some((l) => l.toLowerCase() === value);
    default: {
      const word = unquote(token).toLowerCase();
      return (m) => [m.subject, m.snippet, m.from, m.to, m.cc].some((f) => f.toLowerCase().includes(word));
    }
  }
}

function unquote(s: string): string {
  return s.startsWith('"') && s.endsWith('"') && s.length >= 2 ? s.slice(1, -1) : s;
}

function parseSearchDate(value: string): number | undefined {
  if (/^\d{9,}$/.test(value)) return Number(value) * 1000;
  const match = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$/.exec(value);
  if (!match) return undefined;
  return Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
}
