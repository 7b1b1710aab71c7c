import { err, type Keyring, ok } from '@syncline/core';
import type { Pool } from 'pg';
import type { ConnectorResult } from '../contract/connector';
import type { CredentialStore, StoredCredentials } from './token-source';

/** Same associated data as the API (apps/sync-api connections): binds a ciphertext to its row. */
export const credentialsAad = (connectionId: string): string => `connection:${connectionId}`;

/** Credentials sealed with the keyring on the connection row (`credentials_ciphertext`, `credentials_key_id`). */
export class PgCredentialStore implements CredentialStore {
  constructor(
    private readonly pool: Pool,
    private readonly keyring: Keyring,
  ) {}

  async load(connectionId: string): Promise<ConnectorResult<StoredCredentials>> {
    const { rows } = await this.pool.query<{ ciphertext: Buffer | null; key_id: string | null }>(
      'SELECT credentials_ciphertext AS ciphertext, credentials_key_id AS key_id FROM connection WHERE id = $1',
      [connectionId],
    );
    const row = rows[0];
    if (!row?.ciphertext || !row.key_id)
      return err({ code: 'AuthRevoked', message: `connection ${connectionId} has no credentials` });
    // A ciphertext that does not open is a bug or tampering, not an expected failure: it throws.
    const plain = this.keyring.open(
      { keyId: row.key_id, ciphertext: row.ciphertext },
      credentialsAad(connectionId),
    );
    return ok(JSON.parse(plain) as StoredCredentials);
  }

  async save(connectionId: string, credentials: StoredCredentials): Promise<void> {
    const sealed = this.keyring.seal(JSON.stringify(credentials), credentialsAad(connectionId));
    await this.pool.query(
      `UPDATE connection SET credentials_ciphertext = $2, credentials_key_id = $3, updated_at = now()
       WHERE id = $1`,
      [connectionId, sealed.ciphertext, sealed.keyId],
    );
  }
}
