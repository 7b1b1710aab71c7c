import { randomUUID } from 'node:crypto';
import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import type { EntityType, SourceChangeInput, WorkspaceId } from '@syncline/core';
import { ChangeLog } from '@syncline/log';
import type { Pool } from 'pg';
import { SYNC_CONSUMER_GROUP } from '../connections/connections.repository';
import { LOG_POOL } from '../infra/change-log.module';
import { OwnConnections } from '../infra/own-connection';

/** How long an edit waits to be merged before the API answers without the new view. */
const APPLY_WAIT_MS = 3_000;
const APPLY_POLL_MS = 20;

export interface EditRequest {
  workspaceId: WorkspaceId;
  entityType: EntityType;
  entityId: string;
  /** Who edits, as `actorRef` keeps it (`member:<id>`, or an API key's id): an actor of its own in the entity's history. */
  actor: string;
  fields: Record<string, unknown>;
  /** A retried request with the same key is one edit. */
  idempotencyKey?: string | undefined;
  /** The conflict this edit settles. */
  resolves?: string | undefined;
}

export interface AcceptedEdit {
  changeKey: string;
  /** Whether the sync stage had merged it when the API answered. */
  applied: boolean;
}

/**
 * Edits made in Syncline go on the change log like any provider's change, as changes of the
 * workspace's own connection: the sync stage merges them (the one writer of an entity) and
 * the writers carry them to every connected system. The API waits briefly for the merge so
 * that it can answer with the new view.
 */
@Injectable()
export class EditLog {
  constructor(
    @Inject(ChangeLog) private readonly log: ChangeLog,
    @Inject(LOG_POOL) private readonly pool: Pool,
    @Inject(OwnConnections) private readonly own: OwnConnections,
  ) {}

  async submit(edit: EditRequest): Promise<AcceptedEdit> {
    const eventKey = `edit:${edit.actor}:${edit.idempotencyKey ?? randomUUID()}`;
    return this.appendOwn(edit.workspaceId, (connectionId) => ({
      workspaceId: edit.workspaceId,
      connectionId,
      entityType: edit.entityType,
      externalId: edit.entityId,
      op: 'upsert',
      eventKey,
      eventTime: new Date(),
      fields: edit.fields,
      origin: { kind: 'user', userId: edit.actor, ...(edit.resolves ? { resolves: edit.resolves } : {}) },
    }));
  }

  /**
   * Appends one change of the workspace's own connection (an edit, an identity operation)
   * and waits briefly for the sync stage to have read it.
   */
  async appendOwn(
    workspaceId: WorkspaceId,
    change: (connectionId: string) => SourceChangeInput,
  ): Promise<AcceptedEdit> {
    const connectionId = await this.own.of(workspaceId);
    const input = change(connectionId);
    const result = await this.log.append([input]);
    if (!result.ok) {
      if (result.error.code === 'Closed') throw new ServiceUnavailableException('shutting down; send again');
      throw new Error(`the change log refused a change: ${result.error.message}`);
    }
    const [appended] = result.value;
    if (appended === undefined) throw new Error('the change log returned no result for a change');
    const applied =
      appended.offset === null
        ? await this.keyApplied(connectionId, input.eventKey)
        : await this.waitApplied(appended.partition, appended.offset);
    return { changeKey: input.eventKey, applied };
  }

  private async waitApplied(partition: number, offset: number): Promise<boolean> {
    const deadline = Date.now() + APPLY_WAIT_MS;
    for (;;) {
      const { rows } = await this.pool.query<{ done: boolean }>(
        `SELECT committed_offset >= $3 AS done FROM consumer_offset WHERE group_name = $1 AND partition = $2`,
        [SYNC_CONSUMER_GROUP, partition, offset],
      );
      if (rows[0]?.done === true) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, APPLY_POLL_MS));
    }
  }

  /** A repeated edit (same idempotency key): applied if the first one was. */
  private async keyApplied(connectionId: string, eventKey: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ partition: number; offset: string }>(
      `SELECT partition, "offset" FROM change_event WHERE connection_id = $1 AND event_key = $2`,
      [connectionId, eventKey],
    );
    const row = rows[0];
    return row === undefined ? false : this.waitApplied(row.partition, Number(row.offset));
  }
}
