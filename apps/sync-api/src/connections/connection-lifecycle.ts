import type { ConnectionCursorsState } from './connections.repository';
import { statusAfterReauth } from './connections.repository';
import type { ConnectionStatus } from './connections.schemas';

/** What an admin can do to a connection besides disconnecting it. */
export type LifecycleAction = 'pause' | 'resume' | 'resync';

/** Why an action is refused (409): the code the API answers with. */
export type LifecycleRefusal = 'credentials_required' | 'connection_paused' | 'connection_disconnected';

export const PAUSED_REASON = 'paused by an admin';
export const RESYNC_REASON = 'full resync requested by an admin';
/** The reason tells a repeated disconnect which kind the first one was. */
export const DISCONNECTED_KEPT_REASON = 'disconnected by an admin; the data it brought was kept';
export const DISCONNECTED_ERASED_REASON = 'disconnected by an admin; what only it knew was erased';

/** What to do to a connection in `status`, from the action alone. */
export type LifecyclePlan =
  | { kind: 'refused'; code: LifecycleRefusal }
  /** Already where the action leads: answered as it is, nothing written or audited. */
  | { kind: 'unchanged' }
  | { kind: 'pause' }
  | { kind: 'resume'; status: ConnectionStatus }
  | { kind: 'resync' };

export interface LifecycleSubject {
  status: ConnectionStatus;
  /** Where its cursors say it stopped: where a resume picks up (as after new credentials). */
  cursors: ConnectionCursorsState;
  hasCredentials: boolean;
}

export function planLifecycle(action: LifecycleAction, subject: LifecycleSubject): LifecyclePlan {
  const { status } = subject;
  if (status === 'disconnected') return { kind: 'refused', code: 'connection_disconnected' };
  switch (action) {
    case 'pause':
      return status === 'paused' ? { kind: 'unchanged' } : { kind: 'pause' };
    case 'resume':
      if (status === 'needs_reauth' || !subject.hasCredentials)
        return { kind: 'refused', code: 'credentials_required' };
      // An `error` connection is resumed too: that is how an admin retries after fixing its cause.
      if (status === 'paused' || status === 'error')
        return { kind: 'resume', status: statusAfterReauth(subject.cursors) };
      return { kind: 'unchanged' };
    case 'resync':
      // A paused connection stays paused until an admin resumes it, resync or not.
      if (status === 'paused') return { kind: 'refused', code: 'connection_paused' };
      if (status === 'needs_reauth' || !subject.hasCredentials)
        return { kind: 'refused', code: 'credentials_required' };
      return { kind: 'resync' };
  }
}

/** The message of a refusal, for the 409. */
export function refusalMessage(code: LifecycleRefusal, id: string, action: string): string {
  switch (code) {
    case 'credentials_required':
      return `connection ${id} needs new credentials (PUT /api/v1/connections/${id}/credentials) before it can ${action}`;
    case 'connection_paused':
      return `connection ${id} is paused: resume it (POST /api/v1/connections/${id}/resume) before it can ${action}`;
    case 'connection_disconnected':
      return `connection ${id} is disconnected for good and cannot ${action}`;
  }
}
