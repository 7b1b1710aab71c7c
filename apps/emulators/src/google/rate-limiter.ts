export type GoogleApi = 'calendar' | 'gmail' | 'tasks' | 'oauth';

/** Per-user quotas, as Google publishes them by default (configurable per user in the control API). */
export interface UserLimits {
  calendarPerMinute: number;
  tasksPerMinute: number;
  /** Gmail counts quota units, not calls: messages.get costs 5, history.list 2, and so on. */
  gmailUnitsPerSecond: number;
}

export const DEFAULT_LIMITS: UserLimits = {
  calendarPerMinute: 600,
  tasksPerMinute: 600,
  gmailUnitsPerSecond: 250,
};

interface Spent {
  at: number;
  units: number;
}

/** Sliding windows per user and API; refused calls are not counted, so a backing-off client recovers. */
export class UserRateLimiter {
  private readonly windows = new Map<string, Spent[]>();

  constructor(private readonly now: () => number) {}

  admit(email: string, api: GoogleApi, units: number, limits: UserLimits): boolean {
    const rule = ruleFor(api, limits);
    if (!rule) return true;
    const key = `${api}\u0000${email}`;
    const now = this.now();
    const spent = (this.windows.get(key) ?? []).filter((s) => s.at > now - rule.windowMs);
    const used = spent.reduce((sum, s) => sum + s.units, 0);
    if (used + units > rule.capacity) {
      this.windows.set(key, spent);
      return false;
    }
    spent.push({ at: now, units });
    this.windows.set(key, spent);
    return true;
  }

  clear(): void {
    this.windows.clear();
  }
}

function ruleFor(api: GoogleApi, limits: UserLimits): { windowMs: number; capacity: number } | undefined {
  switch (api) {
    case 'calendar':
      return { windowMs: 60_000, capacity: limits.calendarPerMinute };
    case 'tasks':
      return { windowMs: 60_000, capacity: limits.tasksPerMinute };
    case 'gmail':
      return { windowMs: 1000, capacity: limits.gmailUnitsPerSecond };
    case 'oauth':
      return undefined;
  }
}
