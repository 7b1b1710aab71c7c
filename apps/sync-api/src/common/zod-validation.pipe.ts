import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { isStorableText } from '@syncline/core';
import { z } from 'zod';
import { ValidationFailedException } from './api-errors';

/**
 * Deeper than any input the API takes. A value nested further is refused before anything
 * walks it recursively: `JSON.stringify` of a few thousand levels (a 20 kB body) overflows
 * the stack, which answered 500 where a schema takes any JSON (connection credentials).
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * Longer than any text the API takes (HubSpot's longest property value is 65,536 characters),
 * for a field whose schema sets no bound of its own (connection credentials take any JSON).
 */
export const MAX_INPUT_STRING_LENGTH = 65_536;

/**
 * Validates every parameter declared with a zod schema, as in
 * `@Body({ schema: createConnectionBody })`, and hands the parsed value to the handler.
 * Declaring the schema on the decorator (rather than passing a pipe instance) lets the
 * OpenAPI document be generated from the same schema.
 *
 * Before the schema, every string of the value (keys too) is checked for what no field may
 * hold, so no route need say it again: text PostgreSQL cannot store, and text past any bound.
 */
@Injectable()
export class ZodValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const { schema } = metadata;
    if (schema === undefined) return value;
    // Skipping a schema we cannot run would silently accept unvalidated input.
    if (!(schema instanceof z.ZodType)) throw new TypeError('parameter schemas must be zod schemas');
    const location = { part: metadata.type, name: metadata.data };
    const unfit = unfitInput(value);
    if (unfit !== undefined) {
      const issue: z.core.$ZodIssue = { code: 'custom', ...unfit, input: undefined };
      throw new ValidationFailedException([issue], location);
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw new ValidationFailedException(parsed.error.issues, location);
  }
}

type Path = (string | number)[];

/**
 * The first place of the value that no schema may be asked about, and why: nested past
 * MAX_INPUT_DEPTH (at the top, as the whole value is refused), or a string (value or key)
 * that `textProblem` refuses. A loop, so that the walk itself cannot overflow the stack.
 */
function unfitInput(value: unknown): { path: Path; message: string } | undefined {
  const pending: [unknown, Path][] = [[value, []]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, path] = next;
    if (typeof current === 'string') {
      const problem = textProblem(current);
      if (problem !== undefined) return { path, message: problem };
    }
    if (typeof current !== 'object' || current === null) continue;
    if (path.length >= MAX_INPUT_DEPTH)
      return { path: [], message: `nested deeper than ${MAX_INPUT_DEPTH} levels` };
    for (const [key, child] of Object.entries(current)) {
      const problem = Array.isArray(current) ? undefined : textProblem(key);
      // The key is not named: it is the text refused.
      if (problem !== undefined) return { path, message: `a key ${problem}` };
      pending.push([child, [...path, Array.isArray(current) ? Number(key) : key]]);
    }
  }
  return undefined;
}

/** Why no field may hold this text, if none may; the text itself is never quoted back. */
function textProblem(text: string): string | undefined {
  if (text.length > MAX_INPUT_STRING_LENGTH) return `longer than ${MAX_INPUT_STRING_LENGTH} characters`;
  if (!isStorableText(text))
    return 'holds a character PostgreSQL cannot store (U+0000, or half of a UTF-16 surrogate pair)';
  return undefined;
}
