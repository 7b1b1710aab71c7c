/** Who set a value: a connected system, or a person editing in Syncline. */
export type SourceRef = { kind: 'connection'; id: string } | { kind: 'user'; id: string };

export const POLICY_KINDS = ['lww', 'priority', 'manual', 'union'] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

/**
 * How concurrent edits of one field are settled. `priority.order` lists connection ids
 * (or the literal `user` for any Syncline user), best first; unlisted sources rank last.
 */
export type FieldPolicy =
  | { kind: 'lww' }
  | { kind: 'priority'; order: readonly string[] }
  | { kind: 'manual' }
  | { kind: 'union' };

/** The policies of one workspace and entity type; fields not listed use `lww`. */
export type PolicyMap = Readonly<Record<string, FieldPolicy>>;

/** One change reported by a connection (or made by a user), in unified field names. */
export interface InboundChange {
  entityId: string;
  workspaceId: string;
  entityType: string;
  source: SourceRef;
  eventKey: string;
  eventTime: Date;
  fields: Record<string, unknown>;
  /** Event time per field where the provider has one; otherwise `eventTime` applies. */
  fieldTimes?: Record<string, Date | string>;
  /**
   * Fields the source reports back exactly as Syncline wrote them (its echo, recognised by a
   * write receipt): never an edit. Where the source's view holds another value, the source is
   * marked as holding the written one, so it is owed the current value again.
   */
  echo?: Record<string, unknown>;
  /**
   * Values the source holds once this change is applied, other than the change's own: it
   * reports an edit made before a write of ours that replaced it (a provider without
   * conditional writes). The edit still merges; the source is marked as holding these.
   */
  held?: Record<string, unknown>;
}

export interface ConflictCandidate {
  value: unknown;
  source: SourceRef;
  eventTime: Date;
}

/**
 * A conflict as recorded: `concurrent` when two sources edited a field without seeing
 * each other, `late` when an edit older than the value it had seen arrived under lww.
 * The id is derived from the entity, field and candidate edits, so replays record it once.
 */
export interface ConflictRecord {
  id: string;
  workspaceId: string;
  entityId: string;
  field: string;
  kind: 'concurrent' | 'late';
  policy: PolicyKind;
  candidates: ConflictCandidate[];
  /** Absent while a `manual` conflict waits for a person. */
  winner?: ConflictCandidate;
  status: 'open' | 'resolved';
  /** Event time of the change that revealed the conflict. */
  detectedAt: Date;
}

export interface FieldProvenance {
  source: SourceRef;
  eventTime: Date;
  /** A `manual` conflict is open on this field: the value shown is provisional. */
  conflicted: boolean;
}

export interface MergeOutcome {
  entityId: string;
  /** `unchanged`: the values equal what the source had already seen (no merge ran). */
  status: 'applied' | 'duplicate' | 'unchanged';
  values: Record<string, unknown>;
  provenance: Record<string, FieldProvenance>;
  /** Conflicts revealed by this change (new candidate sets or late edits). */
  conflicts: ConflictRecord[];
  /** For every connection that carries the entity, the fields writeback must send it. */
  owed: Map<string, string[]>;
  /**
   * For every connection, what it holds now of the fields it is owed (a field it never held
   * is absent): a report from before the write is told apart from an edit by it.
   */
  held: Map<string, Record<string, unknown>>;
  heads: string[];
}

export interface HistoryEntry {
  hash: string;
  source: SourceRef;
  eventKey: string;
  /** Second resolution (the stored change time). */
  time: Date;
  deps: string[];
  fields: Record<string, { value: unknown; eventTime: Date }>;
}

export interface EntityState {
  values: Record<string, unknown>;
  provenance: Record<string, FieldProvenance>;
}
