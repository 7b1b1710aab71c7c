/**
 * The closed set of failure codes. Provider errors are mapped onto the first seven at the
 * connector boundary; workers and the API decide what to do from the code alone.
 */
export const ERROR_CODES = [
  'RateLimited',
  'Transient',
  'AuthRevoked',
  'CursorInvalid',
  'NotFound',
  'Conflict',
  'Validation',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
