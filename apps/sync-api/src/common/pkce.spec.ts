import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newPkce } from './pkce';

describe('newPkce', () => {
  it('makes a 43-character base64url verifier and its S256 challenge, fresh each time', async () => {
    const pairs = await Promise.all([newPkce(), newPkce(), newPkce()]);
    for (const { verifier, challenge } of pairs) {
      expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(challenge).toBe(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
    }
    expect(new Set(pairs.map((p) => p.verifier)).size).toBe(3);
  });
});
