import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../testing/test-app';

const INDEX = '<!doctype html><html lang="en"><body><div id="root"></div></body></html>';
/** A script big enough to be worth compressing, as the build leaves it: beside its .br and .gz. */
const SCRIPT = `${'export const field = (value) => value === null ? "" : String(value);\n'.repeat(400)}`;

describe('the web app, served from the API’s origin', () => {
  let t: TestApp;
  let dist: string;
  const get = (url: string) => t.app.inject({ method: 'GET', url });

  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'syncline-web-'));
    mkdirSync(join(dist, 'assets'));
    writeFileSync(join(dist, 'index.html'), INDEX);
    writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
    writeFileSync(join(dist, 'assets', 'entry-def456.js'), SCRIPT);
    writeFileSync(join(dist, 'assets', 'entry-def456.js.br'), brotliCompressSync(SCRIPT));
    writeFileSync(join(dist, 'assets', 'entry-def456.js.gz'), gzipSync(SCRIPT));
    writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    t = await startTestApp('web-serve', { WEB_DIST_DIR: dist });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dist, { recursive: true, force: true });
  });

  it('answers the app’s pages with index.html, never cached, under a strict content security policy', async () => {
    for (const url of [
      '/',
      '/people',
      '/people/0f9c5f5e-2b1a-4c1e-9f4e-3c2d1b0a9e8f?tab=history',
      '/sign-in/link',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toBe(INDEX);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
  });

  it('serves hashed assets for a year and other files without a long cache', async () => {
    const asset = await get('/assets/index-abc123.js');
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const icon = await get('/favicon.svg');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('sends the build’s brotli or gzip copy to a browser that takes it, the plain file to one that does not', async () => {
    const url = '/assets/entry-def456.js';
    const as = (encoding: string) =>
      t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': encoding } });
    const br = await as('gzip, deflate, br');
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.rawPayload.length).toBeLessThan(SCRIPT.length / 4);
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(SCRIPT);
    const gz = await as('gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(SCRIPT);
    const plain = await as('identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(SCRIPT);
  });

  it('leaves the API’s unknown paths and missing files a JSON 404, not the app', async () => {
    for (const url of ['/api/v1/nothing-here', '/webhooks/nowhere', '/assets/missing-1.js', '/robots.txt']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ error: { code: 'not_found' } });
    }
  });

  it('keeps the API answering as before', async () => {
    expect((await get('/healthz')).statusCode).toBe(200);
    expect((await get('/api/v1/people')).statusCode).toBe(401);
  });
});

describe('without a built app', () => {
  it('serves no page, and the API runs', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'syncline-noweb-'));
    const t = await startTestApp('web-none', { WEB_DIST_DIR: empty });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/' })).statusCode).toBe(404);
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
