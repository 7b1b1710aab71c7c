import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocumentText, WEB_OPENAPI_JSON } from '../../../../scripts/openapi';
import { startTestApp, type TestApp } from '../testing/test-app';

// The web app is typed from its committed copy of this document (apps/web/src/api/openapi.json,
// schema.d.ts): a route or schema changed here without `npm run openapi` fails this test.
describe('the web app’s OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('web_openapi');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is the API’s own (run `npm run openapi` after changing a route or schema)', async () => {
    const committed: unknown = JSON.parse(readFileSync(WEB_OPENAPI_JSON, 'utf8'));
    const current: unknown = JSON.parse(await openApiDocumentText(t.app));
    expect(current).toEqual(committed);
  });
});
