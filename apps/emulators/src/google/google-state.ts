import type { EmulatorContext } from '../common/context';
import { CalendarWatch } from './calendar-watch';
import { GmailWatch } from './gmail-watch';
import { SeededRandom } from './google-ids';
import { OAuthGrantStore } from './oauth-grants.store';
import type { PushDispatcher } from './push.dispatcher';
import { UserRateLimiter } from './rate-limiter';
import { type GoogleUser, GoogleUserStore } from './user.store';

/**
 * Everything the Google emulator remembers. A reset builds a new one from the same seed,
 * so the OAuth client and the ids that follow come out the same again.
 */
export class GoogleState {
  readonly rng: SeededRandom;
  readonly grants: OAuthGrantStore;
  readonly users: GoogleUserStore;
  readonly limiter: UserRateLimiter;
  readonly calendarWatch: CalendarWatch;
  readonly gmailWatch: GmailWatch;

  constructor(ctx: EmulatorContext, dispatcher: PushDispatcher) {
    const now = () => ctx.now();
    this.rng = new SeededRandom(ctx.seed);
    this.grants = new OAuthGrantStore(this.rng, now);
    this.limiter = new UserRateLimiter(now);
    this.calendarWatch = new CalendarWatch({ rng: this.rng, now, dispatcher });
    this.gmailWatch = new GmailWatch({
      rng: this.rng,
      now,
      dispatcher,
      pushUrlOf: (email) => this.users.get(email)?.pushUrl,
      historyIdOf: (email) => this.users.get(email)?.gmail.historyId ?? 0,
    });
    this.users = new GoogleUserStore({
      rng: this.rng,
      now,
      onCalendarChange: (email) => this.calendarWatch.changed(email),
      onMailboxChange: (email, labelIds) => this.gmailWatch.changed(email, labelIds),
    });
  }

  /** The invalidate-cursors fault: the user's sync tokens and history ids all expire at once. */
  invalidateCursors(user: GoogleUser): void {
    user.calendar.invalidateSyncTokens();
    user.gmail.invalidateHistory();
  }

  dispose(): void {
    this.gmailWatch.clear();
    this.calendarWatch.clear();
  }
}

/** Routes hold this, not the state itself, so a reset swaps the state under them. */
export interface GoogleStateRef {
  readonly current: GoogleState;
}
