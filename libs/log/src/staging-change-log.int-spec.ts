import { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { change, type SeededConnection, seedConnection } from '../../../test/support/fixtures';
import { StagingChangeLog } from './staging-change-log';

let db: TestDatabase;
let pool: Pool;
let log: StagingChangeLog;

beforeAll(async () => {
  db = await createTestDatabase('staging_log');
  pool = new Pool({ connectionString: db.url, max: 6 });
  log = new StagingChangeLog(pool, { partitions: 8 });
  await log.init();
});

afterAll(async () => {
  await log.close();
  await pool.end();
  await db.drop();
});

async function dryRunConnection(label: string): Promise<SeededConnection> {
  const conn = await seedConnection(pool, label);
  await pool.query('UPDATE connection SET dry_run = true WHERE id = $1', [conn.connectionId]);
  return conn;
}

const onLog = async (connectionId: string): Promise<string[]> =>
  (
    await pool.query<{ event_key: string }>(
      'SELECT event_key FROM change_event WHERE connection_id = $1 ORDER BY partition, "offset"',
      [connectionId],
    )
  ).rows.map((r) => r.event_key);

const staged = async (connectionId: string) =>
  (
    await pool.query<{
      event_key: string;
      external_id: string;
      fields: unknown;
      field_times: unknown;
      origin: unknown;
    }>(
      'SELECT event_key, external_id, fields, field_times, origin FROM staged_change WHERE connection_id = $1 ORDER BY id',
      [connectionId],
    )
  ).rows;

describe('StagingChangeLog', () => {
  it("stages a dry-run connection's changes in order, with what the log would keep, and puts none on the log", async () => {
    const conn = await dryRunConnection('stage');
    const changes = ['c-3', 'c-1', 'c-2'].map((externalId) =>
      change(conn, {
        externalId,
        eventKey: `${externalId}:v1`,
        fieldTimes: { email: '2026-11-01T09:00:00Z' },
        origin: { changeSource: 'CRM_UI' },
      }),
    );
    const res = await log.append(changes);
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.value.map((r) => [r.eventKey, r.isNew, r.offset])).toEqual([
      ['c-3:v1', true, null],
      ['c-1:v1', true, null],
      ['c-2:v1', true, null],
    ]);
    expect(await onLog(conn.connectionId)).toEqual([]);
    expect(await staged(conn.connectionId)).toEqual(
      ['c-3', 'c-1', 'c-2'].map((externalId) => ({
        event_key: `${externalId}:v1`,
        external_id: externalId,
        fields: { email: `${externalId}@example.com` },
        field_times: { email: '2026-11-01T09:00:00.000Z' },
        origin: { changeSource: 'CRM_UI' },
      })),
    );
  });

  it('stages a re-read change once, by its event key, as the log keeps it once', async () => {
    const conn = await dryRunConnection('again');
    const c = change(conn, { externalId: 'again', eventKey: 'again:v1' });
    const first = await log.append([c, c]);
    const second = await log.append([{ ...c, fields: { email: 'other@example.com' } }]);
    expect(first.ok && first.value.map((r) => r.isNew)).toEqual([true, false]);
    expect(second.ok && second.value.map((r) => r.isNew)).toEqual([false]);
    expect((await staged(conn.connectionId)).map((r) => r.fields)).toEqual([{ email: 'again@example.com' }]);
  });

  it('splits a mixed batch: the dry-run connection staged, the live one on the log, results in input order', async () => {
    const dry = await dryRunConnection('mixed-dry');
    const live = await seedConnection(pool, 'mixed-live');
    const res = await log.append([
      change(live, { externalId: 'l-1', eventKey: 'l-1:v1' }),
      change(dry, { externalId: 'd-1', eventKey: 'd-1:v1' }),
      change(live, { externalId: 'l-2', eventKey: 'l-2:v1' }),
    ]);
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.value.map((r) => [r.eventKey, r.isNew, r.offset === null])).toEqual([
      ['l-1:v1', true, false],
      ['d-1:v1', true, true],
      ['l-2:v1', true, false],
    ]);
    expect((await onLog(live.connectionId)).sort()).toEqual(['l-1:v1', 'l-2:v1']);
    expect(await onLog(dry.connectionId)).toEqual([]);
    expect((await staged(dry.connectionId)).map((r) => r.event_key)).toEqual(['d-1:v1']);
  });

  it('refuses a bad batch whole, with the index the caller gave, writing nothing', async () => {
    const dry = await dryRunConnection('bad');
    const live = await seedConnection(pool, 'bad-live');
    const res = await log.append([
      change(dry, { externalId: 'ok', eventKey: 'ok:v1' }),
      change(live, { externalId: 'ok-live', eventKey: 'ok-live:v1' }),
      change(dry, { externalId: 'bad', eventKey: 'bad:v1', entityType: 'spaceship' }),
    ]);
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.error).toMatchObject({ code: 'Validation', index: 2 });
    expect(await staged(dry.connectionId)).toEqual([]);
    expect(await onLog(live.connectionId)).toEqual([]);
    // A change naming a dry-run connection under another workspace is refused like on the log.
    const foreign = await log.append([
      change({ ...dry, workspaceId: live.workspaceId }, { externalId: 'x' }),
    ]);
    expect(foreign.ok === false && foreign.error).toMatchObject({ code: 'Validation', index: 0 });
    expect(await staged(dry.connectionId)).toEqual([]);
  });

  it('an append waiting on an enable in progress goes to the log once the enable commits, after what was staged', async () => {
    const conn = await dryRunConnection('race');
    expect((await log.append([change(conn, { externalId: 'r-1', eventKey: 'r-1:v1' })])).ok).toBe(true);
    // The enable: holds the row, moves the staged change onto the log, clears the flag.
    const enable = await pool.connect();
    try {
      await enable.query('BEGIN');
      await enable.query('SELECT 1 FROM connection WHERE id = $1 FOR NO KEY UPDATE', [conn.connectionId]);
      const pending = log.append([change(conn, { externalId: 'r-1', eventKey: 'r-1:v2' })]);
      const settled = await Promise.race([pending.then(() => 'done'), sleep(300).then(() => 'waiting')]);
      expect(settled).toBe('waiting');
      const moved = await log.appendToLog([change(conn, { externalId: 'r-1', eventKey: 'r-1:v1' })]);
      expect(moved.ok).toBe(true);
      await enable.query('DELETE FROM staged_change WHERE connection_id = $1', [conn.connectionId]);
      await enable.query('UPDATE connection SET dry_run = false WHERE id = $1', [conn.connectionId]);
      await enable.query('COMMIT');
      const res = await pending;
      expect(res.ok && res.value[0]).toMatchObject({ eventKey: 'r-1:v2', isNew: true });
      expect(res.ok && res.value[0]!.offset).not.toBeNull();
    } finally {
      enable.release();
    }
    // One record, one partition: the staged change first, then the one that waited.
    expect(await onLog(conn.connectionId)).toEqual(['r-1:v1', 'r-1:v2']);
    expect(await staged(conn.connectionId)).toEqual([]);
    // Remembered as enabled: the next append costs no lookup and goes straight to the log.
    expect((await log.append([change(conn, { externalId: 'r-2', eventKey: 'r-2:v1' })])).ok).toBe(true);
    expect(await onLog(conn.connectionId)).toContain('r-2:v1');
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
