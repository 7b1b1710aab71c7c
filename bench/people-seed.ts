import type { Pool } from 'pg';

export const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Katherine',
  'Emmy',
  'Hedy',
  'Barbara',
  'Edsger',
  'Donald',
  'Frances',
];
export const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Noether',
  'Lamarr',
  'Liskov',
  'Dijkstra',
  'Knuth',
  'Allen',
];

/**
 * A workspace of `people` people written straight into the merged view, as the sync stage
 * leaves it: each with a name, an address at one of 5,000 companies, a phone, provenance and a
 * link to its record in one HubSpot connection. Returns a random sample of their ids and addresses.
 */
export async function seedPeople(
  pool: Pool,
  workspaceId: string,
  people: number,
  sampleSize = 20_000,
): Promise<{ connectionId: string; sample: { id: string; email: string }[] }> {
  const { rows: connection } = await pool.query<{ id: string }>(
    `INSERT INTO connection (id, workspace_id, provider, external_account_id, status)
     VALUES (gen_random_uuid(), $1, 'hubspot', '4711', 'live') RETURNING id::text`,
    [workspaceId],
  );
  const connectionId = connection[0]!.id;
  await pool.query(
    `WITH p AS (
       SELECT i, gen_random_uuid() AS id, ($3::text[])[1 + i % 10] AS first, ($4::text[])[1 + (i / 10) % 10] AS last
         FROM generate_series(1, $2::int) AS i)
     INSERT INTO entity (id, workspace_id, entity_type, display_name, fields, provenance, version, heads)
     SELECT id, $1::uuid, 'person', first || ' ' || last,
            jsonb_build_object('email', lower(first) || '.' || lower(last) || '.' || i || '@company' || (i % 5000) || '.example',
                               'firstName', first, 'lastName', last, 'phone', '+1555' || lpad(i::text, 7, '0'),
                               'jobTitle', 'Account Executive', 'ownerId', 'owner-' || (i % 25)),
            jsonb_build_object('email', jsonb_build_object('source', jsonb_build_object('kind', 'connection', 'id', $5::text),
                                                           'eventTime', '2026-11-30T10:00:00.000Z', 'conflicted', false)),
            1, ARRAY['head-' || i]
       FROM p`,
    [workspaceId, people, FIRST, LAST, connectionId],
  );
  await pool.query(
    `INSERT INTO source_link (workspace_id, connection_id, entity_type, external_id, entity_id)
     SELECT workspace_id, $1::uuid, 'person', 'c' || row_number() OVER (), id FROM entity WHERE entity_type = 'person'`,
    [connectionId],
  );
  // What autovacuum does to a table after a load this size (this machine's server runs with it
  // off): statistics for the planner, and the GIN pending lists moved into the index proper,
  // which every search would otherwise read in full (see TableStatisticsService).
  await pool.query('VACUUM ANALYZE');
  const { rows: sample } = await pool.query<{ id: string; email: string }>(
    `SELECT id::text, fields->>'email' AS email FROM entity ORDER BY random() LIMIT $1`,
    [sampleSize],
  );
  return { connectionId, sample };
}
