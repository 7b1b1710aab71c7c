import { describe, expect, it } from 'vitest';
import { safeReturnTo } from './return-to';

describe('safeReturnTo', () => {
  it.each([
    ['/people', '/people'],
    ['/people/123?tab=history#top', '/people/123?tab=history#top'],
    ['/', '/'],
  ])('keeps the path %s', (requested, kept) => {
    expect(safeReturnTo(requested)).toBe(kept);
  });

  it.each([
    undefined,
    '',
    'people',
    'https://evil.example/',
    '//evil.example/path',
    '/\\evil.example',
    '/.//evil.example',
    '/..//evil.example',
    '/\tevil',
    'javascript:alert(1)',
    `/${'a'.repeat(3000)}`,
  ])('sends %s home', (requested) => {
    expect(safeReturnTo(requested)).toBe('/');
  });
});
