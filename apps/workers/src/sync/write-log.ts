import { contentHash, type WriteReceipt } from '@syncline/connectors';
import type { SourceChangeInput } from '@syncline/core';
import { type CoalescedWrite, writeClaimChange, writeReceiptChange } from '@syncline/sync-stage';
import type { ClaimedRow } from './outbox-claim';

/**
 * The push stage's events (write-events.ts) for the writes it is about to send or has sent:
 * what PushService appends to the log, built here from the coalesced writes.
 */

/**
 * The claims of the updates about to be sent, one per write (its attempt: the most any of its
 * rows has had). A create has no record to claim yet (its echo is a record nobody links until
 * the receipt), nor a write to no record.
 */
export function claimChanges(
  connectionId: string,
  writes: readonly CoalescedWrite[],
  claimed: readonly ClaimedRow[],
  claimedAt: Date,
): SourceChangeInput[] {
  const attempts = new Map(claimed.map((r) => [r.id, r.attempts ?? 0]));
  return writes.flatMap((w) =>
    w.op === 'update' && w.externalId !== null
      ? [
          writeClaimChange(
            { workspaceId: w.workspaceId, connectionId, entityType: w.entityType, externalId: w.externalId },
            {
              idempotencyKey: w.idempotencyKey,
              entityId: w.entityId,
              attempt: Math.max(0, ...w.rowIds.map((id) => attempts.get(id) ?? 0)),
              fields: w.fields,
              prior: w.prior,
              heads: w.heads,
              claimedAt: claimedAt.toISOString(),
            },
          ),
        ]
      : [],
  );
}

/**
 * The receipts of the writes the provider took, with what it answered (`receipts`: the record
 * a create made, its version). A delete leaves nothing to know; a merge, only the version of
 * the record that took the other in (none: no receipt).
 */
export function receiptChanges(
  connectionId: string,
  writes: readonly CoalescedWrite[],
  receipts: readonly WriteReceipt[],
  sentAt: Date,
): SourceChangeInput[] {
  const byKey = new Map(receipts.map((r) => [r.idempotencyKey, r]));
  return writes.flatMap((w) => {
    const receipt = byKey.get(w.idempotencyKey);
    const externalId = receipt?.externalId ?? w.externalId;
    if (w.op === 'delete' || externalId === null) return [];
    if (w.op === 'merge' && !receipt?.providerVersion) return [];
    return [
      writeReceiptChange(
        { workspaceId: w.workspaceId, connectionId, entityType: w.entityType, externalId },
        {
          idempotencyKey: w.idempotencyKey,
          entityId: w.entityId,
          op: w.op,
          fields: w.op === 'merge' ? {} : w.fields,
          prior: w.op === 'merge' ? {} : w.prior,
          heads: w.heads,
          contentHash: receipt?.contentHash ?? contentHash(w.fields),
          sentAt: sentAt.toISOString(),
        },
        receipt?.providerVersion ?? null,
      ),
    ];
  });
}
