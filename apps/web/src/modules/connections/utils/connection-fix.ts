/** What the callout under a connection says: what went wrong, and what to do about it. */
export interface ConnectionFix {
  title: string;
  fix: string;
  /** The action that fixes it, offered beside the text. */
  action: 'reconnect' | 'resume' | 'resync' | null;
  tone: 'danger' | 'warning';
}

/** One line per error code the workers record (libs/core ERROR_CODES) and per status that needs an admin. */
const BY_CODE: Record<string, Omit<ConnectionFix, 'title'> & { title: string }> = {
  AuthRevoked: {
    title: 'Its access was revoked or expired',
    fix: 'Reconnect it: sign in to {provider} with the same account and allow access again. It then picks up where it stopped; nothing is lost meanwhile.',
    action: 'reconnect',
    tone: 'danger',
  },
  RateLimited: {
    title: '{provider} is limiting requests',
    fix: 'The sync waits and retries by itself. If this lasts for hours, check which other apps use the same account at {provider}.',
    action: null,
    tone: 'warning',
  },
  Transient: {
    title: '{provider} failed for a moment',
    fix: 'The sync retries by itself. If it keeps failing, check the status page of {provider}.',
    action: null,
    tone: 'warning',
  },
  CursorInvalid: {
    title: '{provider} no longer knows where the sync had got to',
    fix: 'Resync it to read the account again from the start; records already synced are not duplicated.',
    action: 'resync',
    tone: 'warning',
  },
  NotFound: {
    title: 'Something the sync reads is gone from the account',
    fix: 'A calendar, list or property may have been deleted at {provider}. Check the account and the field mappings, then Resync.',
    action: 'resync',
    tone: 'warning',
  },
  Conflict: {
    title: '{provider} refused a change as conflicting',
    fix: 'It is retried with the latest version. Changes that still fail wait in Dead letters.',
    action: null,
    tone: 'warning',
  },
  Validation: {
    title: '{provider} refused some data as invalid',
    fix: 'Check the field mappings for a property of the wrong type; the writes it refused wait in Dead letters for a retry.',
    action: null,
    tone: 'warning',
  },
};

const STOPPED: Omit<ConnectionFix, 'title'> & { title: string } = {
  title: 'The sync stopped on an error',
  fix: 'Check the account at {provider}, then Resume. If it stops again, Resync reads it from the start.',
  action: 'resume',
  tone: 'danger',
};

/**
 * The callout for a connection, or null when nothing needs saying: from its status first
 * (reconnect, stopped), then from the last error the workers recorded.
 */
export function connectionFix(
  connection: { status: string; hasCredentials: boolean; state: { lastErrorCode: string | null } },
  provider: string,
): ConnectionFix | null {
  const code = connection.state.lastErrorCode;
  const fill = (fix: Omit<ConnectionFix, 'title'> & { title: string }): ConnectionFix => ({
    ...fix,
    title: fix.title.replaceAll('{provider}', provider),
    fix: fix.fix.replaceAll('{provider}', provider),
  });
  if (connection.status === 'disconnected') return null;
  if (connection.status === 'needs_reauth' || !connection.hasCredentials) return fill(BY_CODE.AuthRevoked!);
  if (connection.status === 'error') {
    const known = code === null ? undefined : BY_CODE[code];
    return fill({ ...STOPPED, title: known ? `${known.title}, and the sync stopped` : STOPPED.title });
  }
  if (code === null) return null;
  const known = BY_CODE[code];
  if (known) return fill(known);
  return fill({
    title: `The last pull failed (${code})`,
    fix: 'The sync retries by itself. If the error stays, check Sync health and the account at {provider}.',
    action: null,
    tone: 'warning',
  });
}
