import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { searchWords } from './records.repository';

/** The index's words under two readings of `[[:alnum:]]`: ASCII only (C locale), or Unicode. */
const asciiWords = (text: string) => text.split(/[^a-z0-9]+/).filter(Boolean);
const unicodeWords = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);

describe('searchWords', () => {
  it('takes the runs after a separator, not the first one, which may start inside a word', () => {
    expect(searchWords('ada.lovelace.12345')).toEqual(['lovelace', '12345']);
    expect(searchWords('.lovelace')).toEqual(['lovelace']);
    expect(searchWords('lovelace')).toEqual([]);
    expect(searchWords('a b a')).toEqual(['b', 'a']);
    expect(searchWords('_100%')).toEqual(['100']);
    // After a letter outside ASCII, a run may continue a word of the record.
    expect(searchWords('josé.garcía')).toEqual(['garc']);
    expect(searchWords('éa')).toEqual([]);
  });

  it('never leaves out a record the substring test finds (every word starts a word of the record)', () => {
    const alphabet = fc.constantFrom(...'ab1 .@-_éÅ9z'.split(''));
    fc.assert(
      fc.property(fc.array(alphabet, { minLength: 1, maxLength: 40 }), fc.nat(), fc.nat(), (chars, i, j) => {
        const text = chars.join('').toLowerCase();
        const from = i % text.length;
        const query = text.slice(from, from + 1 + (j % (text.length - from)));
        for (const words of [asciiWords(text), unicodeWords(text)])
          for (const word of searchWords(query)) expect(words.some((w) => w.startsWith(word))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});
