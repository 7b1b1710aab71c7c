import { type ActivityDiff, type ActivityKind, type PersonId, personId } from './types';

/**
 * An activity as the sync stage holds it after a batch: its merged view and the people its
 * parties resolved to. The insights consumer is fed the difference between two of these (the
 * activity before the batch and after it), so what reaches the windows is what the timeline
 * shows, in event time.
 */
export interface ActivityVersion {
  activityId: string;
  entityType: 'meeting' | 'email_activity';
  /** The merged view: `direction`, `sentAt`/`occurredAt` and `threadId` of a mail; `startAt` and `status` of a meeting. */
  values: Readonly<Record<string, unknown>>;
  /** Each party's role and the person it resolved to (parties without a person are left out). */
  parties: readonly { role: string; personId: string }[];
  /** The connection whose change made this version (its watermark is the one that holds). */
  sourceConnectionId: string;
}

/** One activity's contribution to one person: what a +1 or −1 diff carries. */
export interface Contribution {
  person: PersonId;
  kind: ActivityKind;
  eventTime: number;
  threadId: string | undefined;
}

const INBOUND_ROLES = new Set(['from']);
const OUTBOUND_ROLES = new Set(['to', 'cc', 'bcc']);
const MEETING_ROLES = new Set(['organizer', 'attendee']);

const timeOf = (value: unknown): number | undefined => {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
};

/**
 * What an activity counts for, per person:
 *
 * | activity                          | who                          | kind     | at               |
 * |-----------------------------------|------------------------------|----------|------------------|
 * | mail, `direction: inbound`        | its sender                   | mail_in  | sentAt, else occurredAt |
 * | mail, `direction: outbound`       | each recipient (to, cc, bcc) | mail_out | sentAt, else occurredAt |
 * | meeting, not cancelled            | organizer and each attendee  | meeting  | startAt          |
 *
 * The workspace's own people (`ours`: the salespeople whose mailboxes and calendars are
 * connected) count for nothing: every mail of a mailbox has its owner among its parties. An
 * activity without a time, a mail without a direction, a cancelled meeting: nothing.
 */
export function contributionsOf(
  version: ActivityVersion | undefined,
  ours: ReadonlySet<string> = new Set(),
): Contribution[] {
  if (version === undefined) return [];
  const { values } = version;
  let kind: ActivityKind;
  let roles: ReadonlySet<string>;
  let eventTime: number | undefined;
  if (version.entityType === 'meeting') {
    if (values.status === 'cancelled') return [];
    kind = 'meeting';
    roles = MEETING_ROLES;
    eventTime = timeOf(values.startAt);
  } else {
    if (values.direction === 'inbound') {
      kind = 'mail_in';
      roles = INBOUND_ROLES;
    } else if (values.direction === 'outbound') {
      kind = 'mail_out';
      roles = OUTBOUND_ROLES;
    } else return [];
    eventTime = timeOf(values.sentAt) ?? timeOf(values.occurredAt);
  }
  if (eventTime === undefined) return [];
  const threadId =
    kind !== 'meeting' && typeof values.threadId === 'string' && values.threadId !== ''
      ? values.threadId
      : undefined;
  const people = new Set<string>();
  for (const party of version.parties)
    if (roles.has(party.role) && !ours.has(party.personId)) people.add(party.personId);
  return [...people].sort().map((id) => ({ person: personId(id), kind, eventTime, threadId }));
}

const contributionKey = (c: Contribution): string =>
  `${c.person}\u0000${c.kind}\u0000${c.eventTime}\u0000${c.threadId ?? ''}`;

/**
 * The diffs that take an activity from one version to the next: −1 for each contribution the
 * old version made that the new one does not, +1 for each new one; nothing for what both make
 * (an edit of a subject, a read flag). A new activity has no `before`, a deleted one (or one
 * merged away) no `after`. Deterministic: by person, then −1 before +1.
 */
export function activityDiffs(
  before: ActivityVersion | undefined,
  after: ActivityVersion | undefined,
  ours: ReadonlySet<string> = new Set(),
): ActivityDiff[] {
  const version = after ?? before;
  if (version === undefined) return [];
  return contributionDiffs(
    version.activityId,
    contributionsOf(before, ours),
    contributionsOf(after, ours),
    version.sourceConnectionId,
  );
}

/**
 * The diffs between what an activity counted for before and counts for now (two versions, or
 * what a consumer stored and the version it holds now), each carrying the connection whose
 * change made the new version. Deterministic: by person, then −1 before +1.
 */
export function contributionDiffs(
  activityId: string,
  before: readonly Contribution[],
  after: readonly Contribution[],
  connectionId: string,
): ActivityDiff[] {
  const old = new Map(before.map((c) => [contributionKey(c), c]));
  const now = new Map(after.map((c) => [contributionKey(c), c]));
  const diffs: ActivityDiff[] = [];
  const push = (c: Contribution, sign: 1 | -1) =>
    diffs.push({
      activityId,
      personIds: [c.person],
      kind: c.kind,
      eventTime: c.eventTime,
      sign,
      sourceConnectionId: connectionId,
      ...(c.threadId !== undefined ? { threadId: c.threadId } : {}),
    });
  for (const [key, c] of old) if (!now.has(key)) push(c, -1);
  for (const [key, c] of now) if (!old.has(key)) push(c, 1);
  return diffs.sort((a, b) =>
    a.personIds[0]! < b.personIds[0]! ? -1 : a.personIds[0]! > b.personIds[0]! ? 1 : a.sign - b.sign,
  );
}
