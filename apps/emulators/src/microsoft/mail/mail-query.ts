import { GraphError } from '../graph-errors';
import { instantParam } from '../graph-request';

/** `$filter=receivedDateTime ge|gt {instant}`: the one filter message delta supports. */
export interface ReceivedFilter {
  op: 'ge' | 'gt';
  at: number;
}

const RECEIVED = /^\s*receivedDateTime\s+(ge|gt)\s+'?([^'\s]+)'?\s*$/i;

export function parseReceivedFilter(text: string): ReceivedFilter {
  const m = RECEIVED.exec(text);
  if (!m)
    throw new GraphError(
      400,
      'ErrorInvalidUrlQueryFilter',
      `The emulator supports only '$filter=receivedDateTime ge {value}' (or gt) on messages, not '${text}'.`,
    );
  return { op: m[1]!.toLowerCase() as 'ge' | 'gt', at: instantParam('$filter', m[2]!) };
}

export const receivedMatches = (filter: ReceivedFilter | undefined, receivedAt: number): boolean =>
  filter === undefined || (filter.op === 'ge' ? receivedAt >= filter.at : receivedAt > filter.at);

/** The custom `changeType` option of message delta: only one kind of change in the rounds after the first. */
export type ChangeType = 'created' | 'updated' | 'deleted';

export function parseChangeType(text: string): ChangeType {
  const found = (['created', 'updated', 'deleted'] as const).find((c) => c === text.toLowerCase());
  if (!found)
    throw new GraphError(
      400,
      'ErrorInvalidUrlQuery',
      `The value '${text}' of changeType is not valid: created, updated or deleted.`,
    );
  return found;
}
