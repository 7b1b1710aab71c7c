import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { freePort, REPO_ROOT, runScript } from './testing/processes';
import { testEnv } from './testing/test-app';

const MAIN = 'apps/sync-api/src/main.ts';

describe('main.ts', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('sync_api_main');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('refuses to start on a bad setting, naming it', async () => {
    const run = await runScript(MAIN, [], { ...testEnv(db.url), PORT: 'abc' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/invalid configuration:\n\s+PORT: /);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('listens on HOST:PORT and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...testEnv(db.url),
      PORT: String(port),
      LOG_LEVEL: 'warn',
      PATH: process.env.PATH,
    };
    const child = spawn(process.execPath, ['-r', '@swc-node/register', MAIN], { cwd: REPO_ROOT, env });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.on('close', (code, signal) => done({ code, signal })),
    );
    try {
      let health: Response | undefined;
      for (let attempt = 0; attempt < 100 && !health; attempt++) {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (!health) await new Promise((r) => setTimeout(r, 100));
      }
      expect(health?.status).toBe(200);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      const unauthenticated = await fetch(`http://127.0.0.1:${port}/api/v1/me`, {
        headers: {
          authorization: `Bearer sk_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('base64url')}`,
        },
      });
      expect(unauthenticated.status).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
    // Nest closes the app (shutdown hooks) and then re-raises the signal it caught.
    expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(stderr).toBe('');
    // The app's queue left its meta key under the run's own prefix: leave Redis as found.
    const redis = new Redis(env.REDIS_URL ?? '');
    const keys = await redis.keys(`${env.REDIS_PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
});
