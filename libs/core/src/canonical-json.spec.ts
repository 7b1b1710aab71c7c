import { describe, expect, it } from 'vitest';
import { canonicalJson, withoutNulls } from './canonical-json';

// The text is stored (field values in entity documents) and hashed (write receipts' content
// hashes, outbox keys): these outputs are pinned, and a change to them changes stored meaning.
describe('canonicalJson', () => {
  it('keeps null, leaves out undefined members, writes undefined elsewhere as null', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ a: null })).toBe('{"a":null}');
    expect(canonicalJson({ a: undefined })).toBe('{}');
    expect(canonicalJson([null, undefined, 1])).toBe('[null,null,1]');
    expect(canonicalJson({ a: null, b: undefined, c: [undefined] })).toBe('{"a":null,"c":[null]}');
  });

  it('sorts keys by UTF-16 code units at every depth, arrays kept in order', () => {
    expect(canonicalJson({ b: 1, a: { z: [3, { y: 1, x: 2 }], é: 0, A: 0, '10': 0, '9': 0 } })).toBe(
      '{"a":{"10":0,"9":0,"A":0,"z":[3,{"x":2,"y":1}],"é":0},"b":1}',
    );
    expect(canonicalJson([[2, 1], [[]], {}])).toBe('[[2,1],[[]],{}]');
    // An astral character (a surrogate pair, 0xD83D…) sorts before U+FFFD, as code units do.
    expect(canonicalJson({ '\ufffd': 1, '😀': 2 })).toBe('{"😀":2,"\ufffd":1}');
  });

  it('writes numbers as JSON does: -0 is 0, NaN and infinities are null', () => {
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson({ n: -0, f: 1.5, e: 1e21 })).toBe('{"e":1e+21,"f":1.5,"n":0}');
    expect(canonicalJson([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])).toBe(
      '[null,null,null]',
    );
  });

  it('writes text as JSON.stringify does: non-ASCII as is, controls and lone surrogates escaped', () => {
    expect(canonicalJson('Zoë 😀 東京')).toBe('"Zoë 😀 東京"');
    expect(canonicalJson('a"b\\c\n\u0000')).toBe('"a\\"b\\\\c\\n\\u0000"');
    expect(canonicalJson('\ud83d')).toBe('"\\ud83d"');
    expect(canonicalJson({ 'k\u0001': true })).toBe('{"k\\u0001":true}');
  });

  it('writes a Date as its ISO text', () => {
    expect(canonicalJson({ at: new Date(Date.UTC(2026, 10, 29, 10)) })).toBe(
      '{"at":"2026-11-29T10:00:00.000Z"}',
    );
  });
});

describe('withoutNulls', () => {
  it('drops null and undefined members at every depth, keeps array elements and dates', () => {
    const at = new Date(0);
    expect(withoutNulls({ a: null, b: undefined, c: { d: null, e: [null, { f: null, g: 1 }] }, at })).toEqual(
      {
        c: { e: [null, { g: 1 }] },
        at,
      },
    );
    expect(canonicalJson(withoutNulls({ a: null }))).toBe(canonicalJson({}));
    expect(withoutNulls(null)).toBeNull();
  });

  it('keeps a "__proto__" key as a key', () => {
    expect(canonicalJson(withoutNulls(JSON.parse('{"__proto__":{"x":1},"y":null}')))).toBe(
      '{"__proto__":{"x":1}}',
    );
  });
});
