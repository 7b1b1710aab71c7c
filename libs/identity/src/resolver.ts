import type { MatchIndex } from './match-index';
import {
  CROSS_CONNECTION_KINDS,
  DEFAULT_SETTINGS,
  type IdentitySettings,
  keyRank,
  kindOf,
  type MatchRecord,
  REVIEW_ONLY_KINDS,
} from './match-record';
import { nameSimilarity } from './similarity';

export type Decision =
  /** The source record was already linked; nothing was matched. */
  | 'linked-existing'
  /**
   * A deterministic key named the entity: an email address, a phone with the same person's name
   * (`phone_name`), a domain, an iCalUID, a Message-ID; across connections only, a deal's name
   * with its amount or close day, a meeting's title with its start minute.
   */
  | 'linked-deterministic'
  | 'created'
  /** Created, and the best candidates (in the grey zone) are flagged for review; never merged. */
  | 'created-with-possible-duplicate';

export interface Candidate {
  entityId: string;
  score: number;
  evidence: string[];
}

export interface Resolution {
  entityId: string;
  decision: Decision;
  /** 1 for deterministic links, the best fuzzy score otherwise (0 when nothing came close). */
  score: number;
  evidence: string[];
  /** Entities to review against `entityId`: grey-zone candidates and weak keys that disagree. */
  possibleDuplicates: Candidate[];
  /**
   * Further entities the record's strong keys name (one address of each, say): the record
   * shows they are one, so they are merged into `entityId`. Whatever order the records come
   * in, the entities are then the connected groups of records sharing a strong key.
   */
  absorbs: Candidate[];
}

/**
 * Kinds of key whose holders a record joins into one entity when it names several: the same
 * address, phone with name, domain, iCalUID or Message-ID is the same thing whoever holds it.
 * The weaker cross-connection keys (deal and meeting names) never merge: a second holder goes to review.
 */
const JOINING_KINDS: ReadonlySet<string> = new Set([
  'email',
  'phone_name',
  'domain',
  'ical_uid',
  'message_id',
]);

// Where a fuzzy candidate came from, as bit flags.
const NAME = 1;
const ORG = 2;
const LOCAL = 4;
const COMPANY = 8;
const PHONE = 16;
const CORROBORATING = ORG | LOCAL | COMPANY | PHONE;
const BLOCK_FLAGS: Record<string, number> = {
  name: NAME,
  org: ORG,
  local: LOCAL,
  company: COMPANY,
  tel: PHONE,
};
const FLAG_NAMES: [number, string][] = [
  [ORG, 'same-organisation-domain'],
  [LOCAL, 'same-email-local-part'],
  [COMPANY, 'same-company-name'],
  [PHONE, 'same-phone'],
];

/** A name match with nothing else in common is never enough to link on its own. */
const NAME_ONLY_PENALTY = 0.15;
/** Blocks larger than this do not generate candidates. */
const BLOCK_CAP = 256;
const MAX_REVIEW = 3;

/**
 * Decides which canonical entity a source record belongs to, against a `MatchIndex`. The
 * incremental path (one change in a log consumer) and the batch path (a backfill) call the
 * same `resolve`, so they cannot disagree.
 */
export class Resolver {
  private readonly settings: IdentitySettings;

  constructor(
    readonly index: MatchIndex,
    settings: Partial<IdentitySettings> = {},
  ) {
    this.settings = { ...DEFAULT_SETTINGS, ...settings };
  }

  /**
   * The decision for a record that has no source link yet. `newEntityId` is called only when
   * an entity is created. The index is not changed: call `commit` once the decision is stored.
   * Only a key links; a fuzzy match is evidence for review, never a link.
   */
  resolve(record: MatchRecord, newEntityId: () => string): Resolution {
    const deterministic = this.deterministic(record);
    if (deterministic) return deterministic;
    const review = this.fuzzy(record)
      .filter((c) => c.score >= this.settings.reviewThreshold)
      .slice(0, MAX_REVIEW);
    return {
      entityId: newEntityId(),
      decision: review.length > 0 ? 'created-with-possible-duplicate' : 'created',
      score: review[0]?.score ?? 0,
      evidence: review[0]?.evidence ?? [],
      possibleDuplicates: review,
      absorbs: [],
    };
  }

  /** Records the decided link in the index (and the merges it makes). */
  commit(record: MatchRecord, resolution: Pick<Resolution, 'entityId' | 'absorbs'>): void {
    for (const absorbed of resolution.absorbs) this.index.merge(absorbed.entityId, resolution.entityId);
    this.index.add(resolution.entityId, record);
  }

  resolveAndCommit(record: MatchRecord, newEntityId: () => string): Resolution {
    const resolution = this.resolve(record, newEntityId);
    this.commit(record, resolution);
    return resolution;
  }

  private deterministic(record: MatchRecord): Resolution | undefined {
    const keys = record.keys
      .filter((k) => !REVIEW_ONLY_KINDS.has(kindOf(k)))
      .sort((a, b) => keyRank(a) - keyRank(b));
    let chosen: { handle: number; key: string } | undefined;
    const absorbs = new Map<number, string>();
    const conflicts = new Map<number, string>();
    for (const key of keys) {
      const kind = kindOf(key);
      let holders = this.index.withKey(key);
      if (CROSS_CONNECTION_KINDS.has(kind)) {
        // Held by two entities (two deals of one name and amount in one CRM), a weak key cannot
        // say which: it links nothing, and the fuzzy pass flags them for review.
        const agreeing = new Set<number>();
        for (const holder of holders) {
          const handle = this.index.survivor(holder);
          if (this.crossConnectionAgrees(record, holder, handle)) agreeing.add(handle);
        }
        if (agreeing.size !== 1) continue;
        holders = [...agreeing];
      }
      for (const holder of holders) {
        const handle = this.index.survivor(holder);
        if (!chosen) chosen = { handle, key };
        else if (handle === chosen.handle || absorbs.has(handle)) continue;
        else if (JOINING_KINDS.has(kind) && JOINING_KINDS.has(kindOf(chosen.key))) absorbs.set(handle, key);
        else if (!conflicts.has(handle)) conflicts.set(handle, key);
      }
    }
    if (!chosen) return undefined;
    const survivor = chosen.handle;
    const joined = [survivor, ...absorbs.keys()];
    const evidenceOf = (handle: number) => (handle === survivor ? chosen.key : absorbs.get(handle)!);
    return {
      entityId: this.index.entityId(survivor),
      decision: 'linked-deterministic',
      score: 1,
      evidence: [evidenceOf(survivor)],
      possibleDuplicates: [...conflicts]
        .filter(([handle]) => !absorbs.has(handle))
        .map(([handle, key]) => ({
          entityId: this.index.entityId(handle),
          score: 1,
          evidence: [key, 'conflicting-deterministic-key'],
        })),
      absorbs: joined
        .filter((h) => h !== survivor)
        .map((handle) => ({
          entityId: this.index.entityId(handle),
          score: 1,
          evidence: [evidenceOf(handle)],
        })),
    };
  }

  /**
   * A cross-connection key (deal name with amount or close day, meeting title with start
   * minute) holds only between records of different connections, and only when no fact kind
   * both sides carry disagrees: for each kind of `FACT_KINDS` the record has, the entity must
   * hold none of that kind or share one (the same amount, the same close day, the same
   * iCalUID).
   */
  private crossConnectionAgrees(record: MatchRecord, holder: number, survivor: number): boolean {
    const source = record.source;
    if (source && (this.index.hasConnection(holder, source) || this.index.hasConnection(survivor, source))) {
      return false;
    }
    const held = [this.index.factsOf(holder), holder === survivor ? undefined : this.index.factsOf(survivor)];
    const mine = new Map<string, string[]>();
    for (const key of record.keys) {
      const kind = kindOf(key);
      const list = mine.get(kind);
      if (list) list.push(key);
      else mine.set(kind, [key]);
    }
    for (const [kind, keys] of mine) {
      let holds = false;
      let shares = false;
      for (const facts of held) {
        if (!facts) continue;
        for (const fact of facts) {
          if (!fact.startsWith(kind) || fact.charCodeAt(kind.length) !== 58) continue;
          holds = true;
          if (keys.includes(fact)) shares = true;
        }
      }
      if (holds && !shares) return false;
    }
    return true;
  }

  /** Whether an entity (or the one it was merged into) has a record from a connection. */
  private fromConnection(handle: number, survivor: number, connectionId: string | undefined): boolean {
    if (!connectionId) return false;
    return this.index.hasConnection(handle, connectionId) || this.index.hasConnection(survivor, connectionId);
  }

  /** Candidates from the record's blocks, scored, best first, one per surviving entity. */
  private fuzzy(record: MatchRecord): Candidate[] {
    if (!record.name || record.blocks.length === 0) return [];
    const flags = new Map<number, number>();
    for (const block of record.blocks) {
      const members = this.index.inBlock(block);
      // An oversized block (a very common name) says little and would cost much.
      if (members.length > BLOCK_CAP) continue;
      const flag = BLOCK_FLAGS[block.slice(0, block.indexOf(':'))] ?? 0;
      for (const handle of members) flags.set(handle, (flags.get(handle) ?? 0) | flag);
    }
    for (const key of record.keys) {
      if (!key.startsWith('phone:')) continue;
      for (const handle of this.index.withKey(key)) flags.set(handle, (flags.get(handle) ?? 0) | PHONE);
    }
    // The same phone number, one side of it written without a country code.
    for (const probe of record.probes ?? []) {
      const members = probe.startsWith('phone:') ? this.index.withKey(probe) : this.index.inBlock(probe);
      if (members.length > BLOCK_CAP) continue;
      for (const handle of members) flags.set(handle, (flags.get(handle) ?? 0) | PHONE);
    }
    const best = new Map<number, Candidate>();
    for (const [handle, flag] of flags) {
      let similarity = 0;
      for (const name of this.index.namesOf(handle)) {
        similarity = Math.max(similarity, nameSimilarity(record.name, name));
      }
      if (similarity === 0) continue;
      const corroborated = (flag & CORROBORATING) !== 0;
      const score = corroborated ? similarity : similarity - NAME_ONLY_PENALTY;
      const survivor = this.index.survivor(handle);
      const previous = best.get(survivor);
      if (previous && previous.score >= score) continue;
      const evidence = [`name-similarity:${similarity.toFixed(3)}`];
      for (const [bit, label] of FLAG_NAMES) if (flag & bit) evidence.push(label);
      // Two records of one CRM: that CRM keeps them apart, which says much for their being two.
      if (this.fromConnection(handle, survivor, record.source)) evidence.push('same-connection');
      best.set(survivor, { entityId: this.index.entityId(survivor), score, evidence });
    }
    return [...best.values()].sort((a, b) => b.score - a.score || (a.entityId < b.entityId ? -1 : 1));
  }
}
