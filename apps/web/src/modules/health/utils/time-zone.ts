/** The zone the sync stage cuts days in until the workspace names one. */
export const DEFAULT_TIME_ZONE = 'UTC';

/** The IANA zones this browser knows; none when it cannot list them (the saved ones are still offered). */
export function supportedTimeZones(): string[] {
  try {
    return typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  } catch {
    return [];
  }
}

/**
 * What the zone picker offers: UTC first, then every zone the browser knows in alphabetical
 * order, with the saved zones too (a zone this browser does not list stays choosable as it is).
 */
export function timeZoneOptions(supported: readonly string[], saved: readonly string[] = []): string[] {
  const rest = [...new Set([...supported, ...saved])]
    .filter((zone) => zone !== DEFAULT_TIME_ZONE && zone.length > 0)
    .sort((a, b) => a.localeCompare(b, 'en'));
  return [DEFAULT_TIME_ZONE, ...rest];
}

export interface TimeZoneStatus {
  /** "Days are cut in Europe/Paris": the zone the figures on screen are cut in. */
  headline: string;
  /** "Recomputing in Asia/Tokyo…" while the sync stage has not put the saved zone in force; else null. */
  pending: string | null;
}

/** The section's line on the zone: the one in force, and the one being recomputed in, if any. */
export function timeZoneStatus(setting: {
  /** The saved zone. */
  timeZone: string;
  /** The zone the current figures are cut in. */
  inForce: string;
}): TimeZoneStatus {
  return {
    headline: `Days are cut in ${setting.inForce}`,
    pending: setting.inForce === setting.timeZone ? null : `Recomputing in ${setting.timeZone}…`,
  };
}

/** What Save does with the picked zone: nothing to send when it is the saved one (or none). */
export const isNewZone = (picked: string | null, saved: string): picked is string =>
  picked !== null && picked !== saved;
