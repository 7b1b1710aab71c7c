import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { attemptKey, clearDraft, type Draft, readDraft, writeDraft } from './drafts';

/** sessionStorage as the browser has it, for the unit tier's Node. */
function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (index) => [...items.keys()][index] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, String(value)),
  };
}

const ADA = '0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8f';
const draft = (text: string, version = 7): Draft => ({ text, version, idempotencyKey: null, keyFor: null });

describe('field drafts', () => {
  beforeEach(() => vi.stubGlobal('sessionStorage', memoryStorage()));
  afterEach(() => vi.unstubAllGlobals());

  it('are kept per record and field until cleared (a sign-in round trip loses nothing)', () => {
    writeDraft(ADA, 'jobTitle', draft('CTO'));
    writeDraft(ADA, 'phone', draft('+44 1'));
    expect(readDraft(ADA, 'jobTitle')).toEqual(draft('CTO'));
    clearDraft(ADA, 'jobTitle');
    expect(readDraft(ADA, 'jobTitle')).toBeNull();
    expect(readDraft(ADA, 'phone')?.text).toBe('+44 1');
  });

  it('reuse the key for a retry of the same text on the same version, and only then', () => {
    const first = attemptKey(draft('CTO'));
    expect(attemptKey(first).idempotencyKey).toBe(first.idempotencyKey);
    // Another text, or "Apply mine" on the version a 412 brought: a new edit, a new key.
    expect(attemptKey({ ...first, text: 'CEO' }).idempotencyKey).not.toBe(first.idempotencyKey);
    expect(attemptKey({ ...first, version: 8 }).idempotencyKey).not.toBe(first.idempotencyKey);
  });

  it('ignore what is not a draft, and work without storage', () => {
    sessionStorage.setItem(`syncline.draft:${ADA}:jobTitle`, '{not json');
    expect(readDraft(ADA, 'jobTitle')).toBeNull();
    sessionStorage.setItem(`syncline.draft:${ADA}:jobTitle`, JSON.stringify({ text: 1 }));
    expect(readDraft(ADA, 'jobTitle')).toBeNull();
    vi.unstubAllGlobals();
    vi.stubGlobal('sessionStorage', undefined);
    writeDraft(ADA, 'jobTitle', draft('CTO'));
    expect(readDraft(ADA, 'jobTitle')).toBeNull();
  });
});
