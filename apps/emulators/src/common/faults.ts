import { z } from 'zod';

export const FAULT_KINDS = [
  'rate-limit',
  'server-error',
  'latency',
  'drop-webhooks',
  'duplicate-webhooks',
  'revoke-token',
  'invalidate-cursors',
  // HubSpot refuses a CRM write (create, update, delete, merge, associate) as invalid: 400
  // VALIDATION_ERROR, what a property value it does not accept gets. Reads are unaffected.
  'validation-error',
  // The id token the token endpoint issues is wrong in one way (see google/id-token-claims.ts).
  'id-token-aud',
  'id-token-iss',
  'id-token-nonce',
  'id-token-signature',
  'id-token-expired',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type EmulatedService = 'hubspot' | 'google' | 'microsoft';

export const faultSchema = z.strictObject({
  service: z.enum(['hubspot', 'google', 'microsoft']),
  kind: z.enum(FAULT_KINDS),
  /** How many matching calls the fault applies to; absent = until cleared. */
  count: z.number().int().positive().optional(),
  /** For latency: how long to stall. */
  ms: z.number().int().nonnegative().optional(),
  /** A HubSpot portal id, a Google user's email or a Microsoft user's principal name; absent = every account. */
  account: z.union([z.string(), z.number()]).optional(),
  /**
   * The share of matching calls it applies to (a mailbox throttled at 5 %: `0.05`), each call
   * drawn from the emulator's seeded generator; absent = every matching call.
   */
  rate: z.number().gt(0).lte(1).optional(),
});
export type FaultSpec = z.output<typeof faultSchema>;

interface ArmedFault extends FaultSpec {
  remaining: number;
}

/**
 * Faults injected through the control API. A data-plane handler asks `take` whether a
 * fault of a kind applies to this call; each match uses up one of its count.
 */
export class FaultRegistry {
  private faults: ArmedFault[] = [];

  /** `draw`: where a fault with a `rate` gets its chance from (the emulator's seeded generator). */
  constructor(private readonly draw: () => number = Math.random) {}

  add(spec: FaultSpec): void {
    this.faults.push({ ...spec, remaining: spec.count ?? Number.POSITIVE_INFINITY });
  }

  take(service: EmulatedService, kind: FaultKind, account?: string | number): FaultSpec | undefined {
    for (const fault of this.faults) {
      if (fault.service !== service || fault.kind !== kind || fault.remaining <= 0) continue;
      if (fault.account !== undefined && account !== undefined && String(fault.account) !== String(account))
        continue;
      // A fault at a rate lets the other calls through; only the calls it hits use it up.
      if (fault.rate !== undefined && this.draw() >= fault.rate) continue;
      fault.remaining--;
      if (fault.remaining <= 0) this.faults = this.faults.filter((f) => f !== fault);
      return fault;
    }
    return undefined;
  }

  /** Whether a fault is armed, without using it up (for one-off state changes). */
  peek(service: EmulatedService, kind: FaultKind, account?: string | number): boolean {
    return this.faults.some(
      (f) =>
        f.service === service &&
        f.kind === kind &&
        (f.account === undefined || account === undefined || String(f.account) === String(account)),
    );
  }

  clear(): void {
    this.faults = [];
  }
}
