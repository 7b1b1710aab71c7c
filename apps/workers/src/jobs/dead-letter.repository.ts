import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { isUuid, storableJson, storableText } from '@syncline/core';
import type { Pool } from 'pg';
import { PG_POOL } from '../infra/connections';

export interface FailedJobRecord {
  readonly queue: string;
  readonly jobName: string;
  readonly jobId: string;
  /** When the job was created; with the id it names this one job across retries and sweeps. */
  readonly createdAt: number;
  readonly data: unknown;
  readonly attempts: number;
  readonly errorCode: string;
  readonly errorMessage: string;
}

/**
 * dead_letter rows for jobs (source 'queue'). The row id is derived from the job, so the
 * failed-event path and the sweep, or two processes, can both write it: the first wins.
 */
@Injectable()
export class DeadLetterRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Returns false when this job was already recorded. */
  async recordJob(failure: FailedJobRecord): Promise<boolean> {
    const ids = idsIn(failure.data);
    const result = await this.pool.query(
      `INSERT INTO dead_letter (id, workspace_id, connection_id, source, payload, error_code, error_message, attempts)
       VALUES ($1, (SELECT id FROM workspace WHERE id = $2::uuid), $3, 'queue', $4, $5, $6, $7)
       ON CONFLICT (id) DO NOTHING`,
      [
        deadLetterId(failure),
        // A workspace deleted since the enqueue would break the foreign key; the subquery
        // turns it into NULL so the failure is still recorded.
        ids.workspaceId,
        ids.connectionId,
        // Whatever a job carried or its error quoted, the letter is stored (see storableJson).
        JSON.stringify(
          storableJson({
            queue: failure.queue,
            job: failure.jobName,
            jobId: failure.jobId,
            data: failure.data,
          }),
        ),
        storableText(failure.errorCode),
        storableText(failure.errorMessage),
        Math.max(1, failure.attempts),
      ],
    );
    return (result.rowCount ?? 0) > 0;
  }
}

/** A UUID (version 8, "custom") from a hash of the job's identity. */
export function deadLetterId(failure: Pick<FailedJobRecord, 'queue' | 'jobId' | 'createdAt'>): string {
  const hex = createHash('sha256')
    .update(`queue\u0000${failure.queue}\u0000${failure.jobId}\u0000${failure.createdAt}`)
    .digest('hex');
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Payloads carry ids; the tenant and connection ones also go to their own columns for the admin view. */
function idsIn(data: unknown): { workspaceId: string | null; connectionId: string | null } {
  const pick = (key: string): string | null => {
    if (typeof data !== 'object' || data === null) return null;
    const value: unknown = Reflect.get(data, key);
    return typeof value === 'string' && isUuid(value) ? value : null;
  };
  return { workspaceId: pick('workspaceId'), connectionId: pick('connectionId') };
}
