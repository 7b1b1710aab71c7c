import { inspect } from 'node:util';

export interface WaitForOptions<T> {
  /** Default 15 000. */
  timeoutMs?: number;
  /** Default 100. */
  intervalMs?: number;
  /** What is awaited, for the timeout message ("HubSpot A connection to be live"). */
  describe?: string;
  /** When the observed value is good enough; default: truthy. */
  until?: (value: T) => boolean;
}

export class WaitTimeoutError extends Error {
  constructor(
    message: string,
    readonly lastValue: unknown,
    readonly lastError: unknown,
  ) {
    super(message);
    this.name = 'WaitTimeoutError';
  }
}

const show = (value: unknown) => inspect(value, { depth: 6, breakLength: 120, maxArrayLength: 30 });

/**
 * Polls `fn` until its value passes `until` (default: truthy) and returns that value.
 * `fn` may also throw (an `expect` inside, say): a throw counts as "not yet". On timeout
 * the error names what was awaited and shows the last value observed, or the last error.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, options: WaitForOptions<T> = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const intervalMs = options.intervalMs ?? 100;
  const until = options.until ?? ((value: T) => Boolean(value));
  const started = Date.now();
  let observed = false;
  let lastValue: T | undefined;
  let lastError: unknown;
  let attempts = 0;
  for (;;) {
    attempts++;
    try {
      const value = await fn();
      observed = true;
      lastValue = value;
      lastError = undefined;
      if (until(value)) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() - started >= timeoutMs) break;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const what = options.describe ?? 'a condition';
  const last =
    lastError !== undefined
      ? `last attempt threw: ${lastError instanceof Error ? lastError.message : show(lastError)}${
          observed ? `\nlast value before that: ${show(lastValue)}` : ''
        }`
      : `last observed value: ${show(lastValue)}`;
  throw new WaitTimeoutError(
    `timed out after ${timeoutMs} ms (${attempts} attempts) waiting for ${what}\n${last}`,
    lastValue,
    lastError,
  );
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
