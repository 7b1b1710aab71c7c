import type { EmulatorContext } from '../common/context';
import { CalendarStore } from './calendar/calendar.store';
import { MicrosoftGrants } from './grants.store';
import { MicrosoftApps } from './identity/apps.store';
import { AuthorizationCodes } from './identity/authorization-codes';
import { MicrosoftUsers } from './user.store';

/** What one user's mailbox holds. */
export interface Mailbox {
  calendar: CalendarStore;
}

/** Everything the Microsoft emulator knows; a reset replaces it whole. */
export class MicrosoftState {
  readonly users = new MicrosoftUsers();
  readonly grants: MicrosoftGrants;
  readonly apps = new MicrosoftApps();
  readonly codes: AuthorizationCodes;
  private readonly mailboxes = new Map<string, Mailbox>();

  constructor(readonly ctx: EmulatorContext) {
    this.grants = new MicrosoftGrants(() => ctx.now());
    this.codes = new AuthorizationCodes(() => ctx.now());
  }

  /** The user's mailbox, made on first use. */
  mailbox(userId: string): Mailbox {
    let box = this.mailboxes.get(userId);
    if (!box) {
      box = { calendar: new CalendarStore(() => this.ctx.now()) };
      this.mailboxes.set(userId, box);
    }
    return box;
  }

  dispose(): void {
    this.mailboxes.clear();
  }
}

/** The state in force (a reset swaps it), for routes registered once. */
export interface MicrosoftStateRef {
  readonly current: MicrosoftState;
}
