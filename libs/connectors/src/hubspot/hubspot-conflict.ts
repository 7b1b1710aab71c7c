/**
 * HubSpot refuses a record that would repeat a unique value (a contact's address, a declared
 * unique property such as a company's domain, our `syncline_id`) with a CONFLICT that names the
 * record holding it in its message: `Contact already exists. Existing ID: 12345`, or `A company
 * with the unique value "acme.com" for property "domain" already exists. Existing ID: 12345`.
 * Some answers (the emulator's, batch errors) also carry `context.existingId`.
 */
const EXISTING_ID = /\bexisting\s+(?:object\s+)?id\b\s*[:=#]?\s*["']?(\d+)\b/gi;

/**
 * The id of the record an "already exists" refusal names, or undefined when it names none or
 * several different ones (the refusal cannot be pinned on one record).
 */
export function existingIdOf(refusal: { message?: unknown; context?: unknown }): string | undefined {
  const ids = new Set<string>();
  if (typeof refusal.message === 'string')
    for (const match of refusal.message.matchAll(EXISTING_ID)) ids.add(match[1]!);
  if (ids.size === 0 && typeof refusal.context === 'object' && refusal.context !== null) {
    const named = (refusal.context as Record<string, unknown>).existingId;
    for (const id of Array.isArray(named) ? named : [named])
      if ((typeof id === 'string' || typeof id === 'number') && /^\d+$/.test(String(id))) ids.add(String(id));
  }
  return ids.size === 1 ? [...ids][0] : undefined;
}
