import type { z } from 'zod';
import { ValidationFailedException } from './api-errors';

/** Headers have no schema slot on their decorator: parsed here, refused like any other input. */
export function header<S extends z.ZodType>(schema: S, value: unknown, name: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ValidationFailedException(parsed.error.issues, { part: 'header', name });
}
