import { contentHash } from '@syncline/connectors';
import type { LogEvent } from '@syncline/log';
import type { Receipt } from './receipts';

/** Our write reaches the provider before its receipt is stored; a report this close to it is its echo. */
const ECHO_WINDOW_MS = 5_000;

/**
 * Sorts a provider's report of a record against our recent writes to it (oldest first):
 *
 * - A field reported as it stood before our last write of it started (its time is earlier)
 *   no longer says what the source holds: that write replaced it. The source is marked as
 *   holding what we wrote (`held`). The reported value is still merged as an edit when it
 *   is news: none of our writes' values, and either not what the source held when we wrote
 *   (the write's `prior`; never-held means empty) or dated by the provider itself (a
 *   property-change notification). That is an edit made just before our write, which
 *   HubSpot, having no conditional update, let our write overwrite. Anything else is the
 *   state before our write: dropped.
 * - A field reported exactly as one of our writes set it, no later than that write (give or
 *   take the window), is our echo (`echo`), even when a later write has replaced it since.
 * - A field reported as a write still on its way sets it (claimed, its receipt not yet
 *   stored) is our echo too: the provider applied that write and reported it before the
 *   pusher could store the receipt. Merged as the source's edit, it would carry the
 *   provider's time of our write and win over a later edit made elsewhere meanwhile.
 * - Everything else is the source's edit (`fields`); one made while our last write of that
 *   field was on its way (after it started, before its receipt) may have been overwritten
 *   by it, so the source is also marked as holding what we wrote (`held`): at worst the
 *   winner is written once more.
 */
export function splitEcho(
  event: Pick<LogEvent, 'fields' | 'fieldTimes' | 'eventTime'>,
  receipts: readonly Pick<Receipt, 'fields' | 'createdAt' | 'sentAt' | 'prior' | 'inFlight'>[],
): { fields: Record<string, unknown>; echo?: Record<string, unknown>; held?: Record<string, unknown> } {
  if (receipts.length === 0) return { fields: event.fields };
  const confirmed = receipts.filter((r) => r.inFlight !== true);
  const inFlight = receipts.filter((r) => r.inFlight === true);
  const fields: Record<string, unknown> = {};
  const echo: Record<string, unknown> = {};
  const held: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(event.fields)) {
    const dated = event.fieldTimes[field];
    const at = dated ? Date.parse(dated) : event.eventTime.getTime();
    const hash = contentHash({ v: value });
    const setsIt = (r: (typeof receipts)[number]) =>
      Object.hasOwn(r.fields, field) && contentHash({ v: r.fields[field] }) === hash;
    const writes = confirmed.filter((r) => Object.hasOwn(r.fields, field));
    const last = writes.at(-1);
    if (last !== undefined && at < last.sentAt.getTime()) {
      held[field] = last.fields[field];
      const prior = Object.hasOwn(last.prior, field) ? last.prior[field] : null;
      const ours = writes.some(setsIt);
      if (!ours && (dated || contentHash({ v: prior }) !== hash)) fields[field] = value;
      continue;
    }
    const echoed =
      writes.some((r) => at <= r.createdAt.getTime() + ECHO_WINDOW_MS && setsIt(r)) || inFlight.some(setsIt);
    if (echoed) {
      echo[field] = value;
      continue;
    }
    fields[field] = value;
    // An edit made while our write was on its way: which one the provider kept is unknown,
    // so the source is taken to hold ours, and is written the winner again if it lacks it.
    if (last !== undefined && at < last.createdAt.getTime()) held[field] = last.fields[field];
  }
  return {
    fields,
    ...(Object.keys(echo).length > 0 ? { echo } : {}),
    ...(Object.keys(held).length > 0 ? { held } : {}),
  };
}
