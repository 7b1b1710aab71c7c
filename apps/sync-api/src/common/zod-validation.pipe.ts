import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { z } from 'zod';
import { ValidationFailedException } from './api-errors';

/**
 * Deeper than any input the API takes. A value nested further is refused before anything
 * walks it recursively: `JSON.stringify` of a few thousand levels (a 20 kB body) overflows
 * the stack, which answered 500 where a schema takes any JSON (connection credentials).
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * Validates every parameter declared with a zod schema, as in
 * `@Body({ schema: createConnectionBody })`, and hands the parsed value to the handler.
 * Declaring the schema on the decorator (rather than passing a pipe instance) lets the
 * OpenAPI document be generated from the same schema.
 */
@Injectable()
export class ZodValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const { schema } = metadata;
    if (schema === undefined) return value;
    // Skipping a schema we cannot run would silently accept unvalidated input.
    if (!(schema instanceof z.ZodType)) throw new TypeError('parameter schemas must be zod schemas');
    if (nestedDeeperThan(value, MAX_INPUT_DEPTH)) {
      const issue: z.core.$ZodIssue = {
        code: 'custom',
        path: [],
        message: `nested deeper than ${MAX_INPUT_DEPTH} levels`,
        input: undefined,
      };
      throw new ValidationFailedException([issue], { part: metadata.type, name: metadata.data });
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw new ValidationFailedException(parsed.error.issues, { part: metadata.type, name: metadata.data });
  }
}

/** Whether objects or arrays nest past `limit` levels; a loop, so that the check itself cannot overflow. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}
