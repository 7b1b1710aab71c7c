// What PostgreSQL's text and jsonb cannot hold: U+0000, and half of a UTF-16 surrogate pair,
// which is no Unicode character (a text parameter gets U+FFFD in its place, jsonb refuses its
// escape). With the u flag, \p{Surrogate} matches a surrogate only when it is not paired.
const NUL = '\u0000';
const LONE_SURROGATE = /\p{Surrogate}/u;
const EVERY_LONE_SURROGATE = /\p{Surrogate}/gu;
// The same in JSON.stringify's output, which writes them as escapes (and a pair as itself):
// `\u0000` or `\udXXX` after an even run of backslashes (an odd one escapes the backslash).
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/** True when PostgreSQL can store the text as it is. */
export function isStorableText(text: string): boolean {
  return !text.includes(NUL) && !LONE_SURROGATE.test(text);
}

/** True when JSON.stringify's output holds a string PostgreSQL cannot store. */
export function stringifiedJsonIsStorable(json: string): boolean {
  // Most JSON holds no escape of the kind at all: a scan for `\u` is far cheaper than the pattern.
  return !json.includes('\\u') || !UNSTORABLE_ESCAPE.test(json);
}

/**
 * The text with each character PostgreSQL cannot hold written out as its escape (`\u0000`,
 * `\udc00`), for a person to read where it was. Text without one comes back as it is; text
 * that already held such an escape reads the same as one that held the character.
 */
export function storableText(text: string): string {
  return isStorableText(text)
    ? text
    : text
        .replaceAll(NUL, '\\u0000')
        .replace(EVERY_LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/**
 * A JSON value with every string and key made storable (`storableText`), so that a poison
 * payload can always be kept in jsonb; a value PostgreSQL can store comes back as it is.
 * The value is taken as JSON.stringify writes it (dates as text).
 */
export function storableJson(value: unknown): unknown {
  const json = JSON.stringify(value);
  if (json === undefined || stringifiedJsonIsStorable(json)) return value;
  const out: unknown[] = [undefined];
  type Slot = [item: unknown, into: Record<string, unknown> | unknown[], at: string | number];
  const pending: Slot[] = [[JSON.parse(json), out, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, into, at] = next;
    let copy: unknown = item;
    if (typeof item === 'string') copy = storableText(item);
    else if (Array.isArray(item)) {
      const items: unknown[] = new Array(item.length);
      for (const [index, child] of item.entries()) pending.push([child, items, index]);
      copy = items;
    } else if (typeof item === 'object' && item !== null) {
      const fields: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(item)) pending.push([child, fields, storableText(name)]);
      copy = fields;
    }
    (into as Record<string | number, unknown>)[at] = copy;
  }
  return out[0];
}
