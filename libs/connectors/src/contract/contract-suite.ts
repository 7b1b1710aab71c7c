import { type SourceChangeInput, withoutAssociations } from '@syncline/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionContext, Connector, ConnectorResult, Cursor, PullPage, PushWrite } from './connector';
import { contentHash } from './content-hash';
import {
  type ContractHarness,
  type HarnessAccount,
  isNotApplicable,
  type NotApplicableCheck,
} from './testing/harness';

/**
 * The acceptance suite every connector passes, against the emulators with the official SDK.
 * Call it at the top level of `<provider>.contract.int-spec.ts`:
 *
 *   describeConnectorContract(() => new HubspotContractHarness());
 *
 * A check a provider cannot run is replaced by a test, named with the harness's reason,
 * that proves the connector refuses what the check needs; nothing is skipped or dropped.
 */
export function describeConnectorContract(harnessFactory: () => ContractHarness): void {
  const harness = harnessFactory();
  const accounts: HarnessAccount[] = [];
  const open = async (label: string) => {
    const account = await harness.account(label);
    accounts.push(account);
    return account;
  };

  describe(`connector contract: ${harness.name}`, () => {
    beforeAll(() => harness.start(), 120_000);
    afterEach(async () => {
      await Promise.all(accounts.splice(0).map((a) => a.close()));
    });
    afterAll(() => harness.stop());

    it(`backfills ${harness.backfillSize} records over several pages, each once, with zero 429s`, async () => {
      const account = await open('backfill');
      const ids = await account.seed(harness.backfillSize);
      const before = (await account.requests()).length;
      const run = await drain(harness.connector, account.context(), 'backfill', {});
      const ofType = run.changes.filter((c) => c.entityType === harness.entityType);
      expect(ofType.map((c) => c.externalId).sort()).toEqual([...ids].sort());
      expect(new Set(ofType.map((c) => c.eventKey)).size).toBe(ofType.length);
      expect(ofType.every((c) => c.op === 'upsert')).toBe(true);
      expect(run.pages).toBeGreaterThan(1);
      expect(run.sawProgress).toBe(true);
      const requests = (await account.requests()).slice(before);
      expect(requests.filter((r) => r.status === 429)).toEqual([]);
      expect(run.retried).toBe(0);
    });

    it('resumes from a saved cursor after a crash with no gap and no duplicate', async () => {
      const account = await open('resume');
      const ids = await account.seed(harness.backfillSize);
      const committed: SourceChangeInput[] = [];
      let cursor: Cursor = {};
      // Process 1 commits three pages, fetches a fourth, and dies before committing it.
      for (let i = 0; i < 3; i++) {
        const page = unwrap(await harness.connector.backfill(account.context(), cursor));
        committed.push(...page.changes);
        cursor = JSON.parse(JSON.stringify(page.cursor)) as Cursor; // as stored on the row
        expect(page.done).toBe(false);
      }
      unwrap(await harness.connector.backfill(account.context(), cursor));
      // Process 2 starts from the stored cursor with a fresh context.
      const rest = await drain(harness.connector, account.context(), 'backfill', cursor);
      committed.push(...rest.changes);
      const ofType = committed.filter((c) => c.entityType === harness.entityType);
      expect(new Set(ofType.map((c) => c.externalId))).toEqual(new Set(ids));
      const pairs = ofType.map((c) => `${c.externalId}\u0000${c.eventKey}`);
      expect(new Set(pairs).size).toBe(pairs.length);
    });

    it('pulls a remote change as an upsert and a remote delete as a tombstone', async () => {
      const account = await open('tombstone');
      const [changed, deleted] = await account.seed(5);
      const backfill = await drain(harness.connector, account.context(), 'backfill', {});
      await account.changeRemote(changed!);
      await account.deleteRemote(deleted!);
      const pulled = await drain(harness.connector, account.context(), 'pull', backfill.cursor);
      const ofType = pulled.changes.filter((c) => c.entityType === harness.entityType);
      const upsert = ofType.find((c) => c.externalId === changed && c.op === 'upsert');
      expect(upsert).toBeDefined();
      const earlierKeys = new Set(backfill.changes.map((c) => c.eventKey));
      expect(earlierKeys.has(upsert!.eventKey)).toBe(false);
      const tombstone = ofType.find((c) => c.externalId === deleted && c.op === 'delete');
      expect(tombstone).toBeDefined();
      // A second pull from the same cursor redelivers the same keys (the log drops them).
      const again = await drain(harness.connector, account.context(), 'pull', backfill.cursor);
      const againKeys = new Set(again.changes.map((c) => c.eventKey));
      expect(againKeys.has(upsert!.eventKey)).toBe(true);
      expect(againKeys.has(tombstone!.eventKey)).toBe(true);
    });

    const na = harness.notApplicable ?? {};
    // A check that does not apply is not skipped: its test proves the connector really
    // does not offer what the check would exercise, and carries the reason in its name.
    const notApplicableProof: Record<NotApplicableCheck, () => Promise<void>> = {
      writes: async () => {
        expect(harness.connector.writable).not.toContain(harness.entityType);
        const account = await open('not-writable');
        const res = await harness.connector.push(account.context(), [
          {
            op: 'create',
            entityType: harness.entityType,
            fields: {},
            idempotencyKey: 'na-1',
            entityId: 'na-1',
          },
        ]);
        expect(res.ok ? 'accepted' : res.error.code).toBe('Validation');
      },
      webhooks: async () => {
        expect(harness.connector.subscribe).toBeUndefined();
        const res = harness.connector.verifyWebhook(
          {
            method: 'POST',
            url: 'https://example.invalid/webhook',
            headers: {},
            rawBody: '{}',
            receivedAt: new Date(),
          },
          {},
        );
        expect(res.ok ? 'verified' : res.error.code).toBe('Validation');
      },
      cursorInvalidation: async () => {
        const account = await open('not-invalidatable');
        const res = await harness.connector.pull(account.context(), { v: -1 });
        expect(res.ok ? 'accepted' : res.error.code).toBe('CursorInvalid');
      },
    };
    const check = (kind: NotApplicableCheck, title: string, fn: () => Promise<void>) => {
      const reason = na[kind];
      return reason
        ? it(
            `${title}: not applicable to ${harness.name} (${reason}), and refused as such`,
            notApplicableProof[kind],
          )
        : it(title, fn);
    };

    check(
      'cursorInvalidation',
      'cursor invalidation → CursorInvalid, then a full resync with the same set and no new event keys',
      async () => {
        const account = await open('cursor');
        const ids = await account.seed(Math.min(harness.backfillSize, 500));
        const first = await drain(harness.connector, account.context(), 'backfill', {});
        const invalidation = await account.invalidateCursor(first.cursor);
        const stale = invalidation.kind === 'local' ? invalidation.cursor : first.cursor;
        const refused = await harness.connector.pull(account.context(), stale);
        expect(refused.ok ? 'ok' : refused.error.code).toBe('CursorInvalid');
        const again = await drain(harness.connector, account.context(), 'backfill', {});
        const ofType = again.changes.filter((c) => c.entityType === harness.entityType);
        expect(new Set(ofType.map((c) => c.externalId))).toEqual(new Set(ids));
        // Nothing changed remotely, so every event key is one the log has already seen.
        const seen = new Set(first.changes.map((c) => c.eventKey));
        expect(ofType.filter((c) => !seen.has(c.eventKey))).toEqual([]);
      },
    );

    check(
      'webhooks',
      'verifies webhooks (good, bad signature, stale, tampered body) and parses them',
      async () => {
        const account = await open('webhook');
        const wh = await account.webhook();
        expect(harness.connector.verifyWebhook(wh.valid, wh.secrets)).toEqual({ ok: true, value: undefined });
        for (const [name, forged] of Object.entries(wh.forgeries)) {
          if (isNotApplicable(forged)) continue;
          const verdict = harness.connector.verifyWebhook(forged, wh.secrets);
          expect(verdict.ok ? `${name} accepted` : verdict.error.code).toBe('Validation');
        }
        const parsed = unwrap(harness.connector.parseWebhook(wh.valid, account.webhookContext()));
        expect(parsed.kind).toBe(wh.expectedKind);
        if (parsed.kind === 'changes') {
          expect(parsed.changes.some((c) => c.externalId === wh.externalId)).toBe(true);
          const keys = parsed.changes.map((c) => c.eventKey);
          expect(new Set(keys).size).toBe(keys.length);
          // A redelivery parses to the same keys.
          const again = unwrap(harness.connector.parseWebhook(wh.valid, account.webhookContext()));
          expect(again.kind === 'changes' ? again.changes.map((c) => c.eventKey) : []).toEqual(keys);
        }
      },
    );

    check('writes', 'creates idempotently: the same key twice makes one record', async () => {
      const account = await open('idempotent');
      const write = createWrite(harness, account, 1);
      const before = await account.remoteCount();
      const mark = (await account.requests()).length;
      const first = unwrap(await harness.connector.push(account.context(), [write]));
      const between = (await account.requests()).length;
      // A retry from a new process: nothing of the first push is cached in memory.
      const second = unwrap(await harness.connector.push(account.context(), [write]));
      const log = await account.requests();
      expect(first).toHaveLength(1);
      expect(second[0]!.externalId).toBe(first[0]!.externalId);
      expect(second[0]!.idempotencyKey).toBe(write.idempotencyKey);
      // The property itself: one record in the provider.
      expect(await account.remoteCount()).toBe(before + 1);
      expect(await account.remoteRecord(first[0]!.externalId)).toBeDefined();
      // The first push created it; the retry asked the provider (no local memo) and sent at most
      // one create of its own: a lookup-before-insert connector (Tasks) sends none, a
      // provider-deduplicated one (HubSpot upsert, Calendar's client-chosen id) sends one that
      // makes nothing new, as the count above shows.
      const creates = (from: number, to: number) =>
        log.slice(from, to).filter((r) => account.isCreateRequest(r)).length;
      expect(creates(mark, between)).toBe(1);
      expect(log.length).toBeGreaterThan(between);
      expect(creates(between, log.length)).toBeLessThanOrEqual(1);
    });

    check('writes', "recognises the echo of its own write from the receipt's content hash", async () => {
      const account = await open('echo');
      await account.seed(3);
      const start = await drain(harness.connector, account.context(), 'backfill', {});
      const [receipt] = unwrap(
        await harness.connector.push(account.context(), [createWrite(harness, account, 2)]),
      );
      const pulled = await drain(harness.connector, account.context(), 'pull', start.cursor);
      const echo = pulled.changes.find((c) => c.externalId === receipt!.externalId);
      expect(echo).toBeDefined();
      expect(contentHash(withoutAssociations(echo!.fields ?? {}))).toBe(receipt!.contentHash);
      // A later remote edit is not an echo.
      await account.changeRemote(receipt!.externalId);
      const after = await drain(harness.connector, account.context(), 'pull', pulled.cursor);
      const edit = after.changes.find((c) => c.externalId === receipt!.externalId && c.op === 'upsert');
      expect(edit).toBeDefined();
      expect(contentHash(withoutAssociations(edit!.fields ?? {}))).not.toBe(receipt!.contentHash);
    });

    check(
      'writes',
      'refuses a write based on a stale version (Conflict with failedKeys and the current record, none of the push applied); applies it with the current version or none',
      async () => {
        const account = await open('conditional');
        const [a, b] = await account.seed(2);
        const start = await drain(harness.connector, account.context(), 'backfill', {});
        const versionIn = (changes: readonly SourceChangeInput[], id: string) =>
          changes.filter((c) => c.externalId === id && c.op === 'upsert').at(-1)?.providerVersion;
        const aSeen = versionIn(start.changes, a!);
        const bSeen = versionIn(start.changes, b!);
        expect(aSeen).toBeDefined();
        expect(bSeen).toBeDefined();
        // A user edits `a` after we read it (versions have millisecond resolution at best).
        await new Promise((r) => setTimeout(r, 5));
        await account.changeRemote(a!);
        const update = (id: string, n: number, expectedVersion?: string): PushWrite => ({
          op: 'update',
          entityType: harness.entityType,
          externalId: id,
          fields: account.sampleFields(n),
          idempotencyKey: `conditional-${harness.name}-${n}`,
          entityId: `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`,
          ...(expectedVersion !== undefined ? { expectedVersion } : {}),
        });
        const before = { a: await account.remoteRecord(a!), b: await account.remoteRecord(b!) };
        // `b` is current, `a` is stale: the push is refused as a whole, naming `a` only.
        const refused = await harness.connector.push(account.context(), [
          update(b!, 11, bSeen),
          update(a!, 12, aSeen),
        ]);
        expect(refused.ok ? 'applied' : refused.error.code).toBe('Conflict');
        expect(refused.ok ? undefined : refused.error.failedKeys).toEqual([update(a!, 12).idempotencyKey]);
        expect(await account.remoteRecord(a!)).toEqual(before.a);
        expect(await account.remoteRecord(b!)).toEqual(before.b);
        // Based on the version a pull now reports, the write applies ...
        const pulled = await drain(harness.connector, account.context(), 'pull', start.cursor);
        const aNow = versionIn(pulled.changes, a!);
        expect(aNow).toBeDefined();
        expect(aNow).not.toBe(aSeen);
        // The Conflict carried `a` as it is now: the change a pull of this version reports
        // (version, values, event key), so the pull's copy is a duplicate of it.
        const aPulled = pulled.changes.filter((c) => c.externalId === a && c.op === 'upsert').at(-1);
        expect(refused.ok ? undefined : refused.error.current).toEqual([aPulled]);
        const [receipt] = unwrap(await harness.connector.push(account.context(), [update(a!, 13, aNow)]));
        const written = await account.remoteRecord(a!);
        expect(written).not.toEqual(before.a);
        // ... and its receipt carries the version after it, the next write's expected version.
        expect(receipt!.providerVersion).toBeDefined();
        expect(receipt!.providerVersion).not.toBe(aNow);
        unwrap(await harness.connector.push(account.context(), [update(a!, 14, receipt!.providerVersion)]));
        expect(await account.remoteRecord(a!)).not.toEqual(written);
        // A write without an expected version is not checked.
        unwrap(await harness.connector.push(account.context(), [update(b!, 15)]));
        expect(await account.remoteRecord(b!)).not.toEqual(before.b);
      },
    );

    it('retries injected 429s and 5xx within the budget and loses nothing', async () => {
      const account = await open('faults');
      const ids = await account.seed(Math.min(harness.backfillSize, 450));
      const mark = (await account.requests()).length;
      await account.injectFault('rate-limit', 2);
      await account.injectFault('server-error', 2);
      const run = await drain(harness.connector, account.context(), 'backfill', {});
      const ofType = run.changes.filter((c) => c.entityType === harness.entityType);
      expect(new Set(ofType.map((c) => c.externalId))).toEqual(new Set(ids));
      const statuses = (await account.requests()).slice(mark).map((r) => r.status);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      expect(statuses.filter((s) => s >= 500)).toHaveLength(2);
    });

    it('answers AuthRevoked when the token is revoked, without looping', async () => {
      const account = await open('revoked');
      await account.seed(2);
      await account.revokeToken();
      const mark = (await account.requests()).length;
      const result = await harness.connector.backfill(account.context(), {});
      expect(result.ok ? 'ok' : result.error.code).toBe('AuthRevoked');
      expect((await account.requests()).slice(mark).length).toBeLessThan(10);
    });

    check('writes', 'answers AuthRevoked on a push when the token is revoked, without looping', async () => {
      const account = await open('revoked-push');
      await account.revokeToken();
      const mark = (await account.requests()).length;
      const push = await harness.connector.push(account.context(), [createWrite(harness, account, 3)]);
      expect(push.ok ? 'ok' : push.error.code).toBe('AuthRevoked');
      expect((await account.requests()).slice(mark).length).toBeLessThan(10);
    });
  });
}

export interface DrainResult {
  changes: SourceChangeInput[];
  cursor: Cursor;
  pages: number;
  sawProgress: boolean;
  /** How many pages had to be asked again after RateLimited or Transient. */
  retried: number;
}

/**
 * Pages a backfill or pull to `done` as a worker would: every page committed before the
 * next, RateLimited and Transient retried after the advised wait (a bounded number of times).
 */
export async function drain(
  connector: Connector,
  ctx: ConnectionContext,
  mode: 'backfill' | 'pull',
  from: Cursor,
  maxPages = 10_000,
): Promise<DrainResult> {
  const changes: SourceChangeInput[] = [];
  let cursor = from;
  let pages = 0;
  let retried = 0;
  let sawProgress = false;
  for (let attempts = 0; pages < maxPages; ) {
    const result: ConnectorResult<PullPage> = await connector[mode](ctx, cursor);
    if (!result.ok) {
      if ((result.error.code === 'RateLimited' || result.error.code === 'Transient') && attempts < 5) {
        attempts++;
        retried++;
        await new Promise((r) => setTimeout(r, Math.min(result.error.retryAfterMs ?? 200, 2_000)));
        continue;
      }
      throw new Error(`${mode} failed: ${result.error.code}: ${result.error.message}`);
    }
    attempts = 0;
    pages++;
    changes.push(...result.value.changes);
    cursor = result.value.cursor;
    if (result.value.progress) sawProgress = true;
    if (result.value.done) break;
  }
  return { changes, cursor, pages, sawProgress, retried };
}

function createWrite(harness: ContractHarness, account: HarnessAccount, n: number): PushWrite {
  const key = `contract-${harness.name}-${n}-${Date.now().toString(36)}`;
  return {
    op: 'create',
    entityType: harness.entityType,
    fields: account.sampleFields(n),
    idempotencyKey: key,
    entityId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  };
}

/** The value of a result a test expects to succeed; the error's code and message otherwise. */
export function unwrap<T>(result: ConnectorResult<T>): T {
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** Each change as `externalId eventKey`, to count duplicates and compare runs. */
export const changeKeys = (changes: readonly SourceChangeInput[]): string[] =>
  changes.map((c) => `${c.externalId} ${c.eventKey}`);
