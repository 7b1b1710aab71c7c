import {
  err,
  isStorableText,
  MAX_CHANGE_BYTES,
  ok,
  type Result,
  type SourceChange,
  sourceChangeSchema,
  stringifiedJsonIsStorable,
} from '@syncline/core';

export interface AppendValidationError {
  code: 'Validation';
  /** Index of the first refused change in the batch. */
  index: number;
  message: string;
}

/** A validated change, serialised once for the INSERT. */
export interface PreparedChange {
  change: SourceChange;
  fieldsJson: string;
  fieldTimesJson: string;
  originJson: string | null;
}

/**
 * Validates a whole batch before anything is written: one bad change refuses the batch,
 * with the index and the path of the problem.
 */
export function validateChanges(input: readonly unknown[]): Result<PreparedChange[], AppendValidationError> {
  if (!Array.isArray(input))
    return err({ code: 'Validation', index: -1, message: 'changes must be an array' });
  const prepared: PreparedChange[] = [];
  for (let index = 0; index < input.length; index++) {
    const parsed = sourceChangeSchema.safeParse(input[index]);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.length ? issue.path.join('.') : '(change)';
      return err({ code: 'Validation', index, message: `change ${index}: ${path}: ${issue.message}` });
    }
    const change = parsed.data;
    if (Number.isNaN(change.eventTime.getTime())) {
      return err({ code: 'Validation', index, message: `change ${index}: eventTime: invalid date` });
    }
    const fieldsJson = JSON.stringify(change.fields);
    const fieldTimesJson = fieldTimesToJson(change.fieldTimes, change.eventTime);
    const originJson = change.origin === undefined ? null : JSON.stringify(change.origin);
    const bytes =
      Buffer.byteLength(fieldsJson) +
      Buffer.byteLength(fieldTimesJson) +
      (originJson ? Buffer.byteLength(originJson) : 0) +
      Buffer.byteLength(change.eventKey) +
      Buffer.byteLength(change.externalId);
    // PostgreSQL text and jsonb cannot hold NUL or half a surrogate pair; refusing here keeps
    // one bad change from failing the shared INSERT of everyone else's changes.
    if (
      ![fieldsJson, fieldTimesJson, originJson ?? ''].every(stringifiedJsonIsStorable) ||
      ![change.eventKey, change.externalId, change.providerVersion ?? ''].every(isStorableText)
    ) {
      return err({
        code: 'Validation',
        index,
        message: `change ${index}: contains a NUL character or a lone UTF-16 surrogate, which PostgreSQL cannot store`,
      });
    }
    if (bytes > MAX_CHANGE_BYTES) {
      return err({
        code: 'Validation',
        index,
        message: `change ${index}: payload is ${bytes} bytes, over the ${MAX_CHANGE_BYTES}-byte limit`,
      });
    }
    prepared.push({ change, fieldsJson, fieldTimesJson, originJson });
  }
  return ok(prepared);
}

/**
 * The field times the log keeps, as JSON: those that differ from the event's time. A field
 * without a time of its own is read as changed at the event's time (the merge and the echo
 * check both do), so the rest say nothing; a mail's eleven fields, all timed by its arrival,
 * were a third of its row. Written by hand, byte for byte what `JSON.stringify` writes: a
 * Date's `toJSON` takes JSON.stringify off its fast path (about 1.4 µs a field).
 */
export function fieldTimesToJson(times: Readonly<Record<string, Date>>, eventTime?: Date): string {
  const eventMs = eventTime?.getTime();
  let out = '';
  let lastMs = Number.NaN;
  let lastJson = '';
  for (const key of Object.keys(times)) {
    const ms = times[key]!.getTime();
    if (ms === eventMs) continue;
    if (ms !== lastMs) {
      lastMs = ms;
      lastJson = Number.isNaN(ms) ? 'null' : `"${new Date(ms).toISOString()}"`;
    }
    out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${lastJson}`;
  }
  return `{${out}}`;
}
