import * as oidc from 'openid-client';

/**
 * A PKCE pair (RFC 7636, S256): the verifier stays on the server with the flow's state; the
 * challenge goes on the authorize URL, so a code taken off the redirect redeems nothing
 * without the verifier.
 */
export interface Pkce {
  /** 32 random bytes, base64url (43 characters). */
  verifier: string;
  /** BASE64URL(SHA-256(verifier)), sent with `code_challenge_method=S256`. */
  challenge: string;
}

/** A fresh pair, through openid-client (as the member sign-in has always made them). */
export async function newPkce(): Promise<Pkce> {
  const verifier = oidc.randomPKCECodeVerifier();
  return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) };
}
