import { createHash, randomBytes } from 'node:crypto';
import type { Tenant } from './tenants';

export type ChallengeMethod = 'S256' | 'plain';

/** What a consent granted, held under its code until the app redeems it. */
export interface CodeGrant {
  userId: string;
  clientId: string;
  /** The endpoint the code was got at: it is redeemed there (or at the user's tenant). */
  tenant: Tenant;
  redirectUri: string;
  scopes: string[];
  nonce?: string;
  challenge?: { value: string; method: ChallengeMethod };
}

export type CodeLookup =
  | { ok: true; grant: CodeGrant }
  | { ok: false; failure: 'unknown' | 'redeemed' | 'expired' };

interface StoredCode {
  grant: CodeGrant;
  expiresAt: number;
  redeemed: boolean;
}

const CODE_LIFETIME_MS = 10 * 60_000;

/**
 * Authorization codes: ten minutes to live, redeemed once. A redeemed code is kept, so a
 * second redemption is told so (AADSTS54005) rather than that the code is unknown.
 */
export class AuthorizationCodes {
  private readonly codes = new Map<string, StoredCode>();

  constructor(private readonly now: () => number) {}

  issue(grant: CodeGrant): string {
    const code = `1.A${randomBytes(48).toString('base64url')}`;
    this.codes.set(code, { grant, expiresAt: this.now() + CODE_LIFETIME_MS, redeemed: false });
    return code;
  }

  /** The grant behind a code, or why it cannot be redeemed; nothing is used up. */
  find(code: string): CodeLookup {
    const stored = this.codes.get(code);
    if (!stored) return { ok: false, failure: 'unknown' };
    if (stored.redeemed) return { ok: false, failure: 'redeemed' };
    if (stored.expiresAt <= this.now()) return { ok: false, failure: 'expired' };
    return { ok: true, grant: stored.grant };
  }

  /** Uses the code up, once every check of the redemption has passed. */
  redeem(code: string): void {
    const stored = this.codes.get(code);
    if (stored) stored.redeemed = true;
  }
}

/** RFC 7636 §4.6: the verifier, hashed as the challenge's method says, equals the challenge. */
export function verifierMatches(
  challenge: { value: string; method: ChallengeMethod },
  verifier: string,
): boolean {
  const derived =
    challenge.method === 'S256'
      ? createHash('sha256').update(verifier, 'ascii').digest('base64url')
      : verifier;
  return derived === challenge.value;
}
