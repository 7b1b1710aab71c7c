import { isTimeZone } from '@syncline/sync-stage';
import { z } from 'zod';

/** The zone the stage cuts days in until a workspace names its own. */
export const DEFAULT_TIME_ZONE = 'UTC';

/** An IANA name (`Europe/Paris`, `Etc/GMT+5`, `UTC`): a bare offset such as `+01:00` is none. */
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

/**
 * The zone as the runtime spells it when only the case differs (`europe/paris` is saved as
 * `Europe/Paris`); a link (`Asia/Kolkata`) is kept as sent, so the setting reads as it was chosen.
 */
function spelled(name: string): string {
  const resolved = new Intl.DateTimeFormat('en', { timeZone: name }).resolvedOptions().timeZone;
  return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
}

export const replaceTimeZoneBody = z.strictObject({
  timeZone: z
    .string()
    .refine(
      (name) => IANA_NAME.test(name) && isTimeZone(name),
      'not an IANA time zone (such as Europe/Paris, America/New_York or UTC)',
    )
    // On the string, not on the transform: the document describes what is sent.
    .meta({
      description: 'An IANA time zone name, such as `Europe/Paris`, `America/New_York` or `UTC`.',
      examples: ['Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'UTC'],
    })
    .transform(spelled),
});
export type ReplaceTimeZoneBody = z.output<typeof replaceTimeZoneBody>;

/** `If-Match`: the setting's version as returned in `version` / `ETag` (`"3"`, `3` or `W/"3"`). */
export const ifMatchTimeZoneVersion = z
  .string()
  .regex(/^(W\/)?"?\d{1,9}"?$/, "the time zone's version, as in the ETag")
  .transform((value) => Number(value.replace(/^W\//, '').replaceAll('"', '')))
  .optional();

export const timeZoneView = z.object({
  timeZone: z
    .string()
    .describe(
      'The IANA zone the workspace’s days are cut in (activity insights: last contacted, 7/30/90-day windows, trend).',
    ),
  version: z
    .number()
    .int()
    .describe("The setting's version (also the `ETag`): 0 until the first change, then one more per change."),
  inForce: z
    .string()
    .describe(
      'The zone the current insights are computed in. It catches up with `timeZone` once the sync ' +
        'stage has read the change from the log and recomputed the windows in the new zone.',
    ),
});
export type TimeZoneView = z.output<typeof timeZoneView>;
