/** Injection token for the pg pool the change log appends through. */
export const LOG_POOL = Symbol('LOG_POOL');
