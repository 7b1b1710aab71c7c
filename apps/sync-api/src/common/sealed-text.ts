import { type Keyring, KeyringError } from '@syncline/core';
import { z } from 'zod';

/**
 * A short secret kept beside other data where that data is readable (a Redis record of a flow
 * in progress): sealed under the keyring, as provider credentials are, and bound to where it is
 * kept (`boundTo`, the associated data), so a record copied elsewhere does not open.
 */
export const sealedTextSchema = z.object({ keyId: z.string().min(1), ciphertext: z.base64() });
export type SealedText = z.output<typeof sealedTextSchema>;

export function sealText(keyring: Keyring, text: string, boundTo: string): SealedText {
  const sealed = keyring.seal(text, boundTo);
  return { keyId: sealed.keyId, ciphertext: sealed.ciphertext.toString('base64') };
}

/** The text, or null when it does not open (copied from elsewhere, or its key left the keyring). */
export function openText(keyring: Keyring, sealed: SealedText, boundTo: string): string | null {
  try {
    return keyring.open(
      { keyId: sealed.keyId, ciphertext: Buffer.from(sealed.ciphertext, 'base64') },
      boundTo,
    );
  } catch (error) {
    if (error instanceof KeyringError) return null;
    throw error;
  }
}
