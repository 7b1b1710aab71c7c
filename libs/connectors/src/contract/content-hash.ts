import { createHash } from 'node:crypto';
import { canonicalJson, withoutNulls } from '@syncline/core';

/**
 * Hash of unified fields, independent of key order, so a write receipt and a later report
 * of the same content compare equal. Undefined and null members both mean "no value" (at any
 * depth): `{ a: null }` hashes as `{}`.
 */
export function contentHash(fields: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(canonicalJson(withoutNulls(fields)))
    .digest('base64url');
}
