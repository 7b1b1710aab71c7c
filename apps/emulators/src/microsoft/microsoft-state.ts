import type { EmulatorContext } from '../common/context';
import { CalendarStore } from './calendar/calendar.store';
import { MicrosoftGrants } from './grants.store';
import { MicrosoftApps } from './identity/apps.store';
import { AuthorizationCodes } from './identity/authorization-codes';
import { MailStore } from './mail/mail.store';
import type { MailboxChange } from './subscriptions/mailbox-change';
import { NotificationDispatcher } from './subscriptions/notification.dispatcher';
import { Subscriptions } from './subscriptions/subscriptions.store';
import { MailboxThrottle } from './throttling/mailbox-throttle';
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
  readonly apps: MicrosoftApps;
  readonly codes: AuthorizationCodes;
  readonly notifications: NotificationDispatcher;
  readonly subscriptions: Subscriptions;
  readonly throttle: MailboxThrottle;
  private readonly mailboxes = new Map<string, Mailbox>();

  constructor(readonly ctx: EmulatorContext) {
    this.grants = new MicrosoftGrants(() => ctx.now());
    this.apps = new MicrosoftApps(ctx.seed);
    this.codes = new AuthorizationCodes(() => ctx.now());
    this.notifications = new NotificationDispatcher(ctx.faults, () => ctx.now());
    this.subscriptions = new Subscriptions(this.notifications, () => ctx.now());
    this.throttle = new MailboxThrottle(() => ctx.now());
  }

  /** The user's mailbox, made on first use. */
  mailbox(userId: string): Mailbox {
    let box = this.mailboxes.get(userId);
    if (!box) {
      const now = () => this.ctx.now();
      const onChange = (change: MailboxChange) => this.changed(userId, change);
      box = {
        calendar: new CalendarStore(now, onChange),
        mail: new MailStore(now, onChange),
        todo: new TodoStore(now, onChange),
      };
      this.mailboxes.set(userId, box);
    }
    return box;
  }

  private changed(userId: string, change: MailboxChange): void {
    const user = this.users.get(userId);
    if (user) this.subscriptions.changed(user, change);
  }

  dispose(): void {
    this.notifications.stop();
    this.mailboxes.clear();
  }
}

/** The state in force (a reset swaps it), for routes registered once. */
export interface MicrosoftStateRef {
  readonly current: MicrosoftState;
}
