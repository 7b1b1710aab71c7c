import type { EmulatorContext } from '../common/context';
import { CalendarStore } from './calendar/calendar.store';
import { MicrosoftGrants } from './grants.store';
import { MicrosoftApps } from './identity/apps.store';
import { AuthorizationCodes } from './identity/authorization-codes';
import { MailStore } from './mail/mail.store';
import { TodoStore } from './todo/todo.store';
import { MicrosoftUsers } from './user.store';

/** What one user's mailbox holds. */
export interface Mailbox {
  calendar: CalendarStore;
  mail: MailStore;
  todo: TodoStore;
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
      const now = () => this.ctx.now();
      box = { calendar: new CalendarStore(now), mail: new MailStore(now), todo: new TodoStore(now) };
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
