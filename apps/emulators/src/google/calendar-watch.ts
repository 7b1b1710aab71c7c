import { isPlainObject } from './calendar-event';
import { GoogleApiError, googleErrors } from './google-errors';
import type { SeededRandom } from './google-ids';
import type { PushDispatcher } from './push.dispatcher';

const DEFAULT_TTL_MS = 7 * 24 * 3600_000;
const MAX_TTL_MS = 30 * 24 * 3600_000;

export interface WatchChannel {
  id: string;
  email: string;
  resourceId: string;
  resourceUri: string;
  address: string;
  token?: string;
  expiration: number;
  lastMessageNumber: number;
}

export interface ChannelResource {
  kind: 'api#channel';
  id: string;
  resourceId: string;
  resourceUri: string;
  token?: string;
  expiration: string;
}

export interface CalendarWatchDeps {
  rng: SeededRandom;
  now: () => number;
  dispatcher: PushDispatcher;
}

/**
 * Calendar push channels: bodiless POSTs that say only *that* a calendar changed. Channel
 * ids are unique across users, as they are per Google Cloud project.
 */
export class CalendarWatch {
  private readonly channels = new Map<string, WatchChannel>();

  constructor(private readonly deps: CalendarWatchDeps) {}

  watch(
    email: string,
    calendar: { resourceId: string; calendarIdAsRequested: string },
    body: unknown,
  ): ChannelResource {
    if (!isPlainObject(body)) throw googleErrors.parseError('The request body must be a JSON object.');
    const { id, type, address, token, expiration } = body;
    if (typeof id !== 'string' || id === '') throw googleErrors.required('Required', 'id');
    if (type !== 'web_hook' && type !== 'webhook') {
      throw new GoogleApiError(400, {
        domain: 'push',
        reason: 'pushInvalidType',
        message: `Unknown channel type: ${String(type)}`,
      });
    }
    if (typeof address !== 'string' || !/^https?:\/\//.test(address)) {
      throw new GoogleApiError(400, {
        domain: 'push',
        reason: 'pushInvalidUrl',
        message: `Invalid notification address: ${String(address)}`,
      });
    }
    if (token !== undefined && typeof token !== 'string')
      throw googleErrors.invalid('Invalid channel token.');
    const existing = this.channels.get(id);
    if (existing && this.isActive(existing)) {
      throw new GoogleApiError(400, {
        domain: 'global',
        reason: 'channelIdNotUnique',
        message: 'Channel id not unique',
      });
    }
    const now = this.deps.now();
    const requested = expiration === undefined ? undefined : Number(expiration);
    const channel: WatchChannel = {
      id,
      email,
      resourceId: calendar.resourceId,
      resourceUri: `https://www.googleapis.com/calendar/v3/calendars/${encodeURIComponent(calendar.calendarIdAsRequested)}/events?alt=json`,
      address,
      ...(token === undefined ? {} : { token }),
      expiration:
        requested === undefined || Number.isNaN(requested)
          ? now + DEFAULT_TTL_MS
          : Math.min(requested, now + MAX_TTL_MS),
      lastMessageNumber: 0,
    };
    this.channels.set(id, channel);
    this.notify(channel, 'sync');
    return {
      kind: 'api#channel',
      id,
      resourceId: channel.resourceId,
      resourceUri: channel.resourceUri,
      ...(channel.token === undefined ? {} : { token: channel.token }),
      expiration: String(channel.expiration),
    };
  }

  /** channels.stop: only the user who opened a channel can stop it. */
  stop(email: string, body: unknown): void {
    if (!isPlainObject(body) || typeof body.id !== 'string') throw googleErrors.required('Required', 'id');
    const channel = this.channels.get(body.id);
    if (
      !channel ||
      channel.email !== email ||
      (body.resourceId !== undefined && body.resourceId !== channel.resourceId)
    ) {
      throw googleErrors.notFound(`Channel '${body.id}' not found for project 'syncline-emulator'`);
    }
    this.channels.delete(body.id);
  }

  /** Something in the user's calendar changed: every live channel hears `exists`. */
  changed(email: string): void {
    for (const channel of this.channels.values()) {
      if (channel.email !== email) continue;
      if (this.isActive(channel)) this.notify(channel, 'exists');
      else this.channels.delete(channel.id);
    }
  }

  list(email: string): WatchChannel[] {
    return [...this.channels.values()].filter((c) => c.email === email);
  }

  clear(): void {
    this.channels.clear();
  }

  private isActive(channel: WatchChannel): boolean {
    return channel.expiration > this.deps.now();
  }

  private notify(channel: WatchChannel, state: 'sync' | 'exists' | 'not_exists'): void {
    // Numbers rise with gaps, never contiguously, so receivers cannot count on them.
    channel.lastMessageNumber =
      state === 'sync' ? 1 : channel.lastMessageNumber + this.deps.rng.between(2, 40);
    const headers: Record<string, string> = {
      'X-Goog-Channel-ID': channel.id,
      'X-Goog-Channel-Expiration': new Date(channel.expiration).toUTCString(),
      'X-Goog-Resource-ID': channel.resourceId,
      'X-Goog-Resource-URI': channel.resourceUri,
      'X-Goog-Resource-State': state,
      'X-Goog-Message-Number': String(channel.lastMessageNumber),
      'User-Agent': 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)',
    };
    if (channel.token !== undefined) headers['X-Goog-Channel-Token'] = channel.token;
    this.deps.dispatcher.send({
      key: `calendar:${channel.id}`,
      account: channel.email,
      kind: 'calendar',
      url: channel.address,
      headers,
      retryOn: 'server-errors',
    });
  }
}
