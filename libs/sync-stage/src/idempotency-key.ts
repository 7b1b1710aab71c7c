import { createHash } from 'node:crypto';
import { canonicalJson } from '@syncline/core';

/**
 * The idempotency keys of outbox rows: one per write owed to a connection, unique in it
 * (outbox and write_receipt are keyed by connection and key). Every key is derived from the
 * state it writes, never from a count, so the same history owes the same keys, and a write
 * owed twice is queued (and sent) once. Every place that builds or matches a key, in
 * TypeScript or SQL, goes through this module.
 *
 * | write                         | key                                                     |
 * |-------------------------------|---------------------------------------------------------|
 * | create                        | `<entity>.<connection>.create`                          |
 * | create owed again (unmerge)   | `<create key>.again:<operation>`                        |
 * | update at heads               | `<entity>.<connection>.<heads digest>`                  |
 * | update owed again at heads    | `<update key>.<values digest>`                          |
 * | delete                        | `<entity>.<connection>.delete`                          |
 * | archive of a folded copy      | `<absorbed>.<connection>.fold:<operation>:<record>`     |
 * | provider merge                | `<absorbed>.<connection>.merge:<operation>:<record>`    |
 * | create set aside by a fold    | `<create key>.folded:<operation>`                       |
 * | create sent as an update      | `<create key>.as-update.<heads prefix>`                 |
 * | association                   | `<from>.<connection>.associate.<digest of pair+origin>` |
 * | removal of an association     | `<from>.<connection>.dissociate.<digest of its key>`    |
 */

/** A short digest (22 base64url characters of SHA-256) of `text`. */
export const keyDigest = (text: string): string =>
  createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** The digest of a set of heads, whatever their order. */
export const headsDigest = (heads: readonly string[]): string => keyDigest([...heads].sort().join(','));

/**
 * One key per (entity, target): however many times a create is owed, the provider makes one
 * record (Calendar client ids, HubSpot upsert, the Tasks marker). `again` names the operation
 * (an unmerge) that unlinked the copy an earlier create made there (`flags.createAgain`): the
 * create owed since is another write, with a receipt of its own (its event key on the log
 * derives from this key) and a new provider id where the provider takes ours.
 */
export const createKey = (entityId: string, connectionId: string, again?: string): string =>
  `${entityId}.${connectionId}.create${again === undefined ? '' : `.again:${again}`}`;

/**
 * SQL: the create key of an entity and connection given as SQL expressions (columns or
 * parameters), the same text as `createKey`; `again`, an SQL expression that may be NULL.
 */
export const createKeySql = (entityId: string, connectionId: string, again?: string): string =>
  `${entityId}::text || '.' || ${connectionId}::text || '.create'` +
  (again === undefined ? '' : ` || COALESCE('.again:' || (${again}), '')`);

/**
 * SQL: whether the key `key` is a create key of the entity and connection (`createKey`, owed
 * again or not).
 */
export const isCreateKeySql = (key: string, entityId: string, connectionId: string): string =>
  `(${key} = ${createKeySql(entityId, connectionId)}
    OR starts_with(${key}, ${createKeySql(entityId, connectionId)} || '.again:'))`;

/**
 * SQL: a LATERAL subquery, `created`, of the latest create receipt (`entity_id`,
 * `idempotency_key`) of the record in columns `<record>.connection_id`, `.entity_type` and
 * `.external_id`: whom a copy we made was made for, and under which key (a copy made again, an
 * unmerge since, answers to its latest create).
 */
export const latestCreateSql = (record: string): string =>
  `LEFT JOIN LATERAL (
     SELECT r.entity_id, r.idempotency_key FROM write_receipt r
      WHERE r.connection_id = ${record}.connection_id AND r.entity_type = ${record}.entity_type
        AND r.external_id = ${record}.external_id
        AND ${isCreateKeySql('r.idempotency_key', 'r.entity_id', 'r.connection_id')}
      ORDER BY r.sent_at DESC, r.idempotency_key DESC LIMIT 1) created ON true`;

/** SQL: the create key an entity row `e` owes a connection, with its `flags.createAgain`. */
export const entityCreateKeySql = (entity: string, connectionId: string): string =>
  createKeySql(`${entity}.id`, connectionId, `${entity}.flags->'createAgain'->>(${connectionId}::text)`);

/** An update carrying what the target is owed at these heads. */
export const updateKey = (entityId: string, connectionId: string, heads: readonly string[]): string =>
  `${entityId}.${connectionId}.${headsDigest(heads)}`;

/**
 * An update owed at heads whose write was sent with other values: the update key, told apart
 * by a digest of the values. Live, a receipt folded after the write was computed shows the
 * target holding other values than it assumed (outbox-writer.ts); in a replay, a new policy
 * over the same history gives the same heads and other final values.
 */
export const updateKeyByValues = (
  entityId: string,
  connectionId: string,
  heads: readonly string[],
  fields: Record<string, unknown>,
): string => `${updateKey(entityId, connectionId, heads)}.${keyDigest(canonicalJson(fields)).slice(0, 16)}`;

/** The delete of the entity's record in the target (a delete elsewhere, under its delete policy). */
export const deleteKey = (entityId: string, connectionId: string): string =>
  `${entityId}.${connectionId}.delete`;

/** The archive of a copy we created, folded away by a merge (see provider-merges.ts). */
export const foldArchiveKey = (
  absorbedId: string,
  connectionId: string,
  operationId: string,
  externalId: string,
): string => `${absorbedId}.${connectionId}.fold:${operationId}:${externalId}`;

/** The provider's own merge a Syncline merge owes a connection (see provider-merges.ts). */
export const providerMergeKey = (
  absorbedId: string,
  connectionId: string,
  operationId: string,
  externalId: string,
): string => `${absorbedId}.${connectionId}.merge:${operationId}:${externalId}`;

/**
 * SQL: the key a create row takes when a merge folds its copy away, so that an unmerge can owe
 * the create again under its own key. `key` and `operationId` are SQL expressions.
 */
export const foldedKeySql = (key: string, operationId: string): string =>
  `${key} || '.folded:' || ${operationId}`;

/** A create sent as an update (the target has a record of the entity by now), at these heads. */
export const asUpdateKey = (key: string, heads: readonly string[]): string =>
  `${key}.as-update.${heads.join('').slice(0, 16)}`;

/**
 * An association of `fromId` with `toId` owed to a connection; `generation` names the assertion
 * that made it owed (a pair removed and associated again is owed under a new key).
 */
export const associateKey = (
  fromId: string,
  connectionId: string,
  to: { type: string; id: string },
  generation: string,
): string => `${fromId}.${connectionId}.associate.${keyDigest(`${to.type}|${to.id}|${generation}`)}`;

/** The removal of the association written under `associate` (its key). */
export const dissociateKey = (fromId: string, connectionId: string, associate: string): string =>
  `${fromId}.${connectionId}.dissociate.${keyDigest(associate)}`;
