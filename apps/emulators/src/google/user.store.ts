import { CalendarStore } from './calendar.store';
import { GmailStore } from './gmail.store';
import type { SeededRandom } from './google-ids';
import { DEFAULT_LIMITS, type UserLimits } from './rate-limiter';
import { TasksStore } from './tasks.store';

export interface GoogleUser {
  email: string;
  /** Stable numeric id: the `sub` of the user's id_token. */
  sub: string;
  /** The profile name an id token and userinfo give (`name`, split into given and family names). */
  name: string;
  /** Whether Google vouches for the address (`email_verified`); false for an unconfirmed one. */
  emailVerified: boolean;
  /** Where the user's Gmail Pub/Sub subscription pushes. */
  pushUrl?: string;
  /** How a rate limit answers for this user: 403 userRateLimitExceeded or 429 rateLimitExceeded. */
  rateLimitStatus: 403 | 429;
  limits: UserLimits;
  calendar: CalendarStore;
  gmail: GmailStore;
  tasks: TasksStore;
}

export interface UserSettings {
  name?: string;
  emailVerified?: boolean;
  pushUrl?: string;
  rateLimitStatus?: 403 | 429;
  limits?: Partial<UserLimits>;
}

export interface UserStoreDeps {
  rng: SeededRandom;
  now: () => number;
  onCalendarChange: (email: string) => void;
  onMailboxChange: (email: string, labelIds: string[]) => void;
}

/** Every emulated Google user, by lower-cased email. Each owns a calendar, a mailbox and task lists. */
export class GoogleUserStore {
  private readonly users = new Map<string, GoogleUser>();

  constructor(private readonly deps: UserStoreDeps) {}

  get(email: string): GoogleUser | undefined {
    return this.users.get(email.toLowerCase());
  }

  all(): GoogleUser[] {
    return [...this.users.values()];
  }

  /** Creates the user, or returns the existing one with its settings updated. */
  upsert(rawEmail: string, settings: UserSettings): { user: GoogleUser; created: boolean } {
    const email = rawEmail.toLowerCase();
    const existing = this.users.get(email);
    if (existing) return { user: this.configure(existing, settings), created: false };
    const { rng, now } = this.deps;
    const user: GoogleUser = {
      email,
      sub: rng.digits(21),
      name: nameFromEmail(email),
      emailVerified: true,
      rateLimitStatus: 403,
      limits: { ...DEFAULT_LIMITS },
      calendar: new CalendarStore(email, { rng, now, onChange: () => this.deps.onCalendarChange(email) }),
      gmail: new GmailStore(email, {
        rng,
        now,
        onChange: (labelIds) => this.deps.onMailboxChange(email, labelIds),
      }),
      tasks: new TasksStore(email, { rng, now }),
    };
    this.users.set(email, this.configure(user, settings));
    return { user, created: true };
  }

  configure(user: GoogleUser, settings: UserSettings): GoogleUser {
    if (settings.name !== undefined) user.name = settings.name;
    if (settings.emailVerified !== undefined) user.emailVerified = settings.emailVerified;
    if (settings.pushUrl !== undefined) user.pushUrl = settings.pushUrl;
    if (settings.rateLimitStatus !== undefined) user.rateLimitStatus = settings.rateLimitStatus;
    if (settings.limits) user.limits = { ...user.limits, ...settings.limits };
    return user;
  }
}

/** `ada.lovelace@example.com` → `Ada Lovelace`: a name for a user made without one. */
function nameFromEmail(email: string): string {
  const local = email.split('@')[0] ?? email;
  return local
    .split(/[._-]+/)
    .filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join(' ');
}
