/**
 * Something to run SQL on: a `pg` pool, client or transaction, or what a log consumer's
 * handler receives. Libraries take this rather than a `pg` type, so a caller chooses where
 * their statements run (its transaction, a sandbox, a test's client).
 */
export interface Queryable {
  query<R extends object = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}
