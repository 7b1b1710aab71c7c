import { err, ok, type SourceChangeInput } from '@syncline/core';
import type { ConnectionContext, ConnectorResult, PushWrite } from '../contract/connector';

/** What a connector tells `checkVersions` about its provider. */
export interface VersionCheck<Target, ProviderRecord> {
  /** The provider key, as the messages start. */
  provider: string;
  /** What one record is called in the messages: `event`, `task`. */
  noun: string;
  /**
   * The provider refuses a stale write itself (If-Match → 412): a push of one write then needs
   * no read. Without that (Google Tasks) every conditional write is read first.
   */
  ifMatch: boolean;
  /** The messages list the external ids of the refused writes. */
  namesIds: boolean;
  /** Where an external id points (e.g. list and task); undefined: no record, pushOne refuses it. */
  target(externalId: string): Target | undefined;
  /** The record as the provider holds it now; `NotFound` counts as gone. */
  read(ctx: ConnectionContext, target: Target): Promise<ConnectorResult<ProviderRecord>>;
  /** Read, but deleted all the same (cancelled, flagged deleted, no id). */
  isGone(record: ProviderRecord): boolean;
  /** The version pulls report as `providerVersion` (the etag). */
  versionOf(record: ProviderRecord): string | null | undefined;
  /** The record as the change a pull of this version reports; undefined leaves it out of `current`. */
  toChange(ctx: ConnectionContext, record: ProviderRecord, target: Target): SourceChangeInput | undefined;
}

/**
 * Writes go one by one, so a stale one found mid-push would leave the earlier ones applied.
 * Before anything is written, this reads the record of every update or delete that carries
 * `expectedVersion` and compares versions: any stale → `Conflict` with every stale write's key
 * in `failedKeys` and each stale record, as read, in `current`; an update whose record is gone
 * → `NotFound` likewise; a delete of a record already gone passes (its goal is met). Any other
 * failed read is returned as it is.
 */
export async function checkVersions<Target, ProviderRecord>(
  ctx: ConnectionContext,
  writes: readonly PushWrite[],
  check: VersionCheck<Target, ProviderRecord>,
): Promise<ConnectorResult<void>> {
  const conditional = writes.filter(
    (w): w is PushWrite & { externalId: string } =>
      w.op !== 'create' && w.expectedVersion !== undefined && !!w.externalId,
  );
  if ((check.ifMatch && writes.length < 2) || conditional.length === 0) return ok(undefined);
  const stale: PushWrite[] = [];
  const gone: PushWrite[] = [];
  const current = new Map<string, SourceChangeInput>();
  for (const write of conditional) {
    const target = check.target(write.externalId);
    if (target === undefined) continue;
    const res = await check.read(ctx, target);
    if (!res.ok && res.error.code !== 'NotFound') return res;
    const record = res.ok ? res.value : undefined;
    if (!record || check.isGone(record)) {
      if (write.op === 'update') gone.push(write);
    } else if (check.versionOf(record) !== write.expectedVersion) {
      stale.push(write);
      const change = check.toChange(ctx, record, target);
      if (change) current.set(`${change.externalId}\u0000${change.eventKey}`, change);
    }
  }
  const ids = (refused: PushWrite[]) =>
    check.namesIds ? ` (${refused.map((w) => w.externalId).join(', ')})` : '';
  if (stale.length > 0)
    return err({
      code: 'Conflict',
      message: `${check.provider}: ${stale.length} ${check.noun}(s) changed since the version the write was based on${ids(stale)}; nothing was written`,
      failedKeys: stale.map((w) => w.idempotencyKey),
      current: [...current.values()],
    });
  if (gone.length > 0)
    return err({
      code: 'NotFound',
      message: `${check.provider}: ${check.noun}(s) to update no longer exist${ids(gone)}; nothing was written`,
      failedKeys: gone.map((w) => w.idempotencyKey),
    });
  return ok(undefined);
}
