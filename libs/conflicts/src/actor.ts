import type { SourceRef } from './types';

// Actor ids are reversible encodings of the source, so provenance needs no lookup table
// and every replica and replay derives the same actor for the same connection or user.
// Prefix byte: 01/02 = connection/user given as a UUID (16 bytes), 11/12 = any other id (UTF-8).
// 21/22 and 31/32 are the same behind an 8-byte salt: a copy of a source's value taken in by a
// merge of entities (see copyActorOf).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function actorOf(source: SourceRef): string {
  const kind = source.kind === 'connection' ? 1 : 2;
  if (UUID.test(source.id)) return `0${kind}${source.id.replaceAll('-', '').toLowerCase()}`;
  return `1${kind}${Buffer.from(source.id, 'utf8').toString('hex')}`;
}

/**
 * An actor of its own that still decodes to `source`: values copied from another entity's
 * document keep their source (provenance, priority policies) without joining that source's
 * own sequence of changes here. `salt` is 16 hex digits.
 */
export function copyActorOf(source: SourceRef, salt: string): string {
  const own = actorOf(source);
  return `${Number(own[0]) + 2}${own.slice(1, 2)}${salt}${own.slice(2)}`;
}

/** Whether an actor is a copy made by copyActorOf. */
export const isCopyActor = (actor: string): boolean => actor[0] === '2' || actor[0] === '3';

export function sourceOfActor(actor: string): SourceRef {
  const copy = isCopyActor(actor);
  const prefix = actor.slice(0, 2);
  const body = actor.slice(copy ? 18 : 2);
  const kind = prefix.endsWith('1') ? 'connection' : 'user';
  if (prefix.startsWith('0') || prefix.startsWith('2')) {
    const id = `${body.slice(0, 8)}-${body.slice(8, 12)}-${body.slice(12, 16)}-${body.slice(16, 20)}-${body.slice(20)}`;
    return { kind, id };
  }
  return { kind, id: Buffer.from(body, 'hex').toString('utf8') };
}

/** Stable text key of a source, for maps and tie-breaks. */
export const sourceKey = (source: SourceRef): string => `${source.kind}:${source.id}`;
