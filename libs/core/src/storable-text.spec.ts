import { describe, expect, it } from 'vitest';
import { isStorableText, storableJson, storableText, stringifiedJsonIsStorable } from './storable-text';

describe('storable text', () => {
  it('tells what PostgreSQL cannot hold: NUL and half a surrogate pair, never a whole pair', () => {
    expect(isStorableText('Ada Lovelace 😀 é')).toBe(true);
    for (const bad of ['a\u0000b', 'a\ud83d', '\ude00b', 'x\udc00\ud83dy'])
      expect(isStorableText(bad)).toBe(false);
  });

  it('writes each such character as its escape, and leaves the rest', () => {
    expect(storableText('Ada\u0000Love\ud83d😀')).toBe('Ada\\u0000Love\\ud83d😀');
    const fine = 'no change \\u0000 here';
    expect(storableText(fine)).toBe(fine);
  });

  it("reads JSON.stringify's escapes, not a backslash written before a u", () => {
    expect(stringifiedJsonIsStorable(JSON.stringify({ a: 'x\u0000' }))).toBe(false);
    expect(stringifiedJsonIsStorable(JSON.stringify(['\udc00']))).toBe(false);
    expect(stringifiedJsonIsStorable(JSON.stringify({ 'k\u0000': 1 }))).toBe(false);
    expect(stringifiedJsonIsStorable(JSON.stringify({ a: '\\u0000 and \\ud800 as text', b: '😀' }))).toBe(
      true,
    );
    expect(stringifiedJsonIsStorable(JSON.stringify({ a: '\\\u0000' }))).toBe(false);
  });

  it('makes keys and strings at any depth storable; a storable value is returned as it is', () => {
    const value = { ok: [1, true, null, 'x'], 'k\u0000': { deep: ['\ud800', { n: 2 }] } };
    expect(storableJson(value)).toEqual({
      ok: [1, true, null, 'x'],
      'k\\u0000': { deep: ['\\ud800', { n: 2 }] },
    });
    const fine = { a: [1, { b: 'c' }] };
    expect(storableJson(fine)).toBe(fine);
    const date = new Date('2026-01-01T00:00:00Z');
    expect(storableJson({ at: date, bad: '\u0000' })).toEqual({ at: date.toISOString(), bad: '\\u0000' });
    let deep: unknown = '\u0000';
    for (let i = 0; i < 1_000; i++) deep = [deep];
    let out = storableJson(deep);
    for (let i = 0; i < 1_000; i++) out = (out as unknown[])[0];
    expect(out).toBe('\\u0000');
  });
});
