import { z } from 'zod';
import { ACTOR_KINDS, type Actor } from './principal';

/**
 * How an actor is kept in text columns and payloads: `member:<uuid>` for a member, the bare
 * uuid for an API key (as everything written before members could act), so readers of the
 * keys' ids see no change. `key:<uuid>` is read too.
 */
export function actorRef(actor: Actor): string {
  return actor.kind === 'member' ? `member:${actor.id}` : actor.id;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The actor a stored reference names; null for anything else (a connection, a system). */
export function parseActorRef(ref: string | null | undefined): Actor | null {
  if (!ref) return null;
  if (UUID.test(ref)) return { kind: 'apiKey', id: ref };
  const colon = ref.indexOf(':');
  if (colon < 0) return null;
  const prefix = ref.slice(0, colon);
  const id = ref.slice(colon + 1);
  if (!UUID.test(id)) return null;
  if (prefix === 'member') return { kind: 'member', id };
  if (prefix === 'key') return { kind: 'apiKey', id };
  return null;
}

/** An actor in a view: `keyId` kept for the readers of the time when only keys acted. */
export const actorView = z.object({
  kind: z.enum(ACTOR_KINDS),
  id: z.uuid(),
  keyId: z.uuid().nullable().describe('The API key, when the actor is one.'),
});
export type ActorView = z.output<typeof actorView>;

export function toActorView(ref: string): ActorView | null {
  const actor = parseActorRef(ref);
  return actor && { kind: actor.kind, id: actor.id, keyId: actor.kind === 'apiKey' ? actor.id : null };
}

/** The view of a reference this API wrote itself; anything unreadable is a bug. */
export function actorViewOf(ref: string): ActorView {
  const view = toActorView(ref);
  if (!view) throw new Error(`unreadable actor reference ${JSON.stringify(ref)}`);
  return view;
}
