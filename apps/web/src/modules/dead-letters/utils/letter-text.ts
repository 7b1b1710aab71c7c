/** How the page describes a dead letter: what failed, in words, and the text "Copy error" copies. */

export interface LetterLike {
  id: string;
  source: string;
  connectionId: string | null;
  eventKey: string | null;
  errorCode: string;
  errorMessage: string;
  attempts: number;
  createdAt: string;
  groupName?: string | null;
}

const SOURCES: Readonly<Record<string, string>> = {
  log: 'A change from a connected system could not be applied',
  push: 'A write to a connected system was refused',
  queue: 'A background job failed',
};

/** One line on what kind of work failed. */
export function sourceSentence(source: string): string {
  return SOURCES[source] ?? `Work from "${source}" failed`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const ENTITY_WORDS: Readonly<Record<string, string>> = {
  person: 'person',
  company: 'company',
  deal: 'deal',
  event: 'calendar event',
  message: 'email',
  task: 'task',
};

/** The payload as a few facts a person can read (the raw payload is shown beside them). */
export function payloadSummary(source: string, payload: unknown): string[] {
  if (!isRecord(payload)) return [];
  const facts: string[] = [];
  const fieldNames = isRecord(payload.fields) ? Object.keys(payload.fields) : [];
  if (source === 'log') {
    const entity = typeof payload.entityType === 'string' ? payload.entityType : null;
    if (entity !== null)
      facts.push(
        `${payload.op === 'delete' ? 'Deleting' : 'Updating'} a ${ENTITY_WORDS[entity] ?? entity}` +
          (typeof payload.externalId === 'string' ? ` (${payload.externalId} in its system)` : ''),
      );
    if (typeof payload.eventTime === 'string') facts.push(`Changed at ${payload.eventTime}`);
  }
  if (source === 'push') {
    const ids = Array.isArray(payload.outboxIds) ? payload.outboxIds.length : 0;
    if (ids > 0) facts.push(`${ids} pending ${ids === 1 ? 'write' : 'writes'}`);
    if (typeof payload.op === 'string') facts.push(`Operation: ${payload.op}`);
    if (typeof payload.entityType === 'string') facts.push(`Record type: ${payload.entityType}`);
  }
  if (source === 'queue') {
    if (typeof payload.job === 'string') facts.push(`Job: ${payload.job}`);
    if (typeof payload.queue === 'string') facts.push(`Queue: ${payload.queue}`);
  }
  if (fieldNames.length > 0)
    facts.push(`Fields: ${fieldNames.slice(0, 8).join(', ')}${fieldNames.length > 8 ? ', …' : ''}`);
  return facts;
}

/** What "Copy error" puts on the clipboard: enough to paste into a ticket. */
export function errorReport(letter: LetterLike, connectionLabel: string | null): string {
  return [
    `${letter.errorCode}: ${letter.errorMessage}`,
    `dead letter ${letter.id} (${letter.source}${letter.groupName ? `, group ${letter.groupName}` : ''})`,
    `connection: ${connectionLabel ?? letter.connectionId ?? 'none'}`,
    ...(letter.eventKey === null ? [] : [`event: ${letter.eventKey}`]),
    `attempts: ${letter.attempts}, failed at ${letter.createdAt}`,
  ].join('\n');
}

/** Whether a retry can redo this letter's work (the API refuses others: discard them once fixed). */
export const isRetryable = (source: string): boolean => source === 'log' || source === 'push';
