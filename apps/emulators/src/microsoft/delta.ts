import { graphErrors } from './graph-errors';

/** How a removed item is reported: `deleted` for good, `changed` for a soft delete. */
export type RemovedReason = 'deleted' | 'changed';

interface Entry<T> {
  seq: number;
  item?: T;
  removed?: RemovedReason;
  /** The item as it was when removed: a view may need it to name what went (a series' occurrences). */
  last?: T;
}

/** What a delta page holds: an item as it stands, or the id of one removed. */
export type DeltaEntry<V> =
  | { kind: 'item'; id: string; item: V }
  | { kind: 'removed'; id: string; reason: RemovedReason };

/** One journal entry changed since a client's token, as a view expands it into page entries. */
export interface JournalChange<T> {
  id: string;
  /** The item as it stands; absent once removed. */
  item?: T;
  /** The removed item's last state. */
  last?: T;
  removed?: RemovedReason;
  /** The position the client's token stands at (0 on the initial round). */
  since: number;
  /** The initial round: every live item, no removals. */
  initial: boolean;
}

/** How a view turns one changed entry into page entries (several for a series). */
export type Expand<T, V> = (change: JournalChange<T>) => DeltaEntry<V>[];

/** How tokens of an invalidated generation are refused: Graph answers 410, or 400, and sometimes a Location to restart at. */
export interface Expiry {
  status: 400 | 410;
  restart: boolean;
}

/**
 * The change journal of one collection (a mailbox's events, a folder's messages, a list's
 * tasks): every write gets the next sequence number, and a delta token is a position in it.
 * `invalidate` starts a new generation: tokens of the old one are refused with
 * `syncStateNotFound`, as when the service's cache evicts a sync state.
 */
export class DeltaJournal<T> {
  private seq = 0;
  private generation = 1;
  private expiry: Expiry = { status: 410, restart: false };
  private readonly entries = new Map<string, Entry<T>>();
  /**
   * Every write in sequence order, so a page reads forward from its token's position instead
   * of sorting the whole journal: an id's older writes stay here, stale (its entry has moved
   * on), until the log is compacted.
   */
  private log: { seq: number; id: string }[] = [];

  /** The position of the latest write (the next one takes `position + 1`). */
  get position(): number {
    return this.seq;
  }

  put(id: string, item: T): number {
    this.write(id, { seq: ++this.seq, item });
    return this.seq;
  }

  remove(id: string, reason: RemovedReason = 'deleted'): boolean {
    const entry = this.entries.get(id);
    if (!entry?.item) return false;
    this.write(id, { seq: ++this.seq, removed: reason, last: entry.item });
    return true;
  }

  private write(id: string, entry: Entry<T>): void {
    this.entries.set(id, entry);
    this.log.push({ seq: entry.seq, id });
    if (this.log.length > 2 * this.entries.size + 1_000)
      this.log = this.log.filter((w) => this.entries.get(w.id)?.seq === w.seq);
  }

  /** The index of the first write after `seq` (binary search: the log is in sequence order). */
  private firstAfter(seq: number): number {
    let [lo, hi] = [0, this.log.length];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The entries written after `after` up to `upTo`, each at its latest write, in sequence order. */
  private *changedBetween(after: number, upTo: number): Generator<[string, Entry<T>]> {
    for (let i = this.firstAfter(after); i < this.log.length; i++) {
      const { seq, id } = this.log[i]!;
      if (seq > upTo) return;
      const entry = this.entries.get(id);
      if (entry?.seq === seq) yield [id, entry];
    }
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.item;
  }

  live(): { id: string; item: T }[] {
    return [...this.entries]
      .filter((e): e is [string, Entry<T> & { item: T }] => e[1].item !== undefined)
      .sort((a, b) => a[1].seq - b[1].seq)
      .map(([id, e]) => ({ id, item: e.item }));
  }

  /** Ids removed so far (a control API's view of deletions). */
  removedIds(): string[] {
    return [...this.entries].filter(([, e]) => e.item === undefined).map(([id]) => id);
  }

  invalidate(expiry: Expiry = { status: 410, restart: false }): void {
    this.generation++;
    this.expiry = expiry;
  }

  /**
   * One page of a delta round. `token` is absent on the initial call (every live item the view
   * holds, no removals) and else what the previous page's link carried. Each changed entry
   * expands into page entries; a page may end inside one entry's expansion (a long series),
   * and the skip token says how far into it. Returns the page and either the token of the
   * next page (`skip`) or the round's end (`delta`).
   */
  page<V>(
    token: DeltaToken | undefined,
    options: {
      pageSize: number;
      expand: Expand<T, V>;
      /** The initial call's own parameters (a calendar view's range), carried in every token after it. */
      params?: Record<string, string>;
      /** The initial request to start again from, for a 410 that carries a Location. */
      restartUrl?: (params: Record<string, string> | undefined) => string;
    },
  ): { entries: DeltaEntry<V>[]; next: DeltaToken } {
    const p = token?.p ?? options.params;
    if (token !== undefined && token.g !== this.generation) {
      const { status, restart } = this.expiry;
      throw graphErrors.syncStateNotFound(
        status,
        restart && options.restartUrl ? options.restartUrl(p) : undefined,
      );
    }
    const since = token?.s ?? 0;
    // Not `since === 0`: a round that began on an empty journal also starts from 0, and must report removals.
    const initial = token === undefined || (token.kind === 'skip' && token.i === true);
    const upTo = token?.kind === 'skip' ? token.u : this.seq;
    const after = token?.kind === 'skip' ? token.a : since;
    const entries: DeltaEntry<V>[] = [];
    let last = after;
    let partial: { os: number; o: number } | undefined;
    for (const [id, e] of this.changedBetween(after, upTo)) {
      const room = options.pageSize - entries.length;
      if (room <= 0) break;
      const expanded = options.expand({ id, item: e.item, last: e.last, removed: e.removed, since, initial });
      // A page that ended inside this entry resumes there, unless the entry changed since (then it left this round).
      const skip = token?.kind === 'skip' && token.os === e.seq ? (token.o ?? 0) : 0;
      const rest = expanded.slice(skip);
      if (rest.length > room) {
        entries.push(...rest.slice(0, room));
        partial = { os: e.seq, o: skip + room };
        break;
      }
      entries.push(...rest);
      last = e.seq;
    }
    const carried = p === undefined ? {} : { p };
    const more = partial !== undefined || !this.changedBetween(last, upTo).next().done;
    return {
      entries,
      next: more
        ? {
            kind: 'skip',
            g: this.generation,
            s: since,
            u: upTo,
            a: last,
            ...(initial ? { i: true } : {}),
            ...(partial ?? {}),
            ...carried,
          }
        : { kind: 'delta', g: this.generation, s: upTo, ...carried },
    };
  }
}

/** A position in a journal: opaque to clients (base64url JSON), with the call's own parameters. */
export type DeltaToken =
  | { kind: 'delta'; g: number; s: number; p?: Record<string, string> }
  | {
      kind: 'skip';
      g: number;
      s: number;
      u: number;
      a: number;
      /** A page that ended inside one entry's expansion: that entry's position, and how many of its entries were sent. */
      os?: number;
      o?: number;
      /** A page of the initial round. */
      i?: boolean;
      p?: Record<string, string>;
    };

export const encodeToken = (token: DeltaToken): string =>
  Buffer.from(JSON.stringify(token)).toString('base64url');

/** A token as a client sent it back; anything unreadable is a sync state the service does not know. */
export function decodeToken(text: string, kind: DeltaToken['kind']): DeltaToken {
  try {
    const token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as DeltaToken;
    if (token.kind !== kind || typeof token.g !== 'number' || typeof token.s !== 'number')
      throw new Error('bad token');
    return token;
  } catch {
    throw graphErrors.syncStateNotFound(400);
  }
}
