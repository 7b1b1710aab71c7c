import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { z } from 'zod';
import { ValidationFailedException } from './api-errors';

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
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw new ValidationFailedException(parsed.error.issues, { part: metadata.type, name: metadata.data });
  }
}
