import type { FastifyInstance } from 'fastify';
import type { FaultRegistry } from './faults';
import type { RequestLog } from './request-log';

/** What both emulated services share: injected faults, the request log, the seed, a clock. */
export interface EmulatorContext {
  faults: FaultRegistry;
  requests: RequestLog;
  /** Seed of the deterministic pseudo-random choices (ids, webhook order, duplicates). */
  seed: number;
  now(): number;
}

/** One emulated provider: its Fastify app (data plane and its own control routes) and a reset. */
export interface EmulatedProvider {
  app: FastifyInstance;
  /** Forgets every account and record, and stops timers (webhook retries, channel expiry). */
  reset(): void;
  close(): Promise<void>;
}
