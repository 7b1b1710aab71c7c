import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

export const DOCS_PATH = 'docs';
export const OPENAPI_JSON_PATH = 'docs/json';

/** Swagger UI at /docs and the OpenAPI document at /docs/json, built from the controllers. */
export function setupOpenApi(app: INestApplication): void {
  const document = new DocumentBuilder()
    .setTitle('Syncline API')
    .setDescription(
      'Unified records and admin API. Every /api route takes `Authorization: Bearer sk_<prefix>_<secret>`, ' +
        'or the session cookie of a signed-in member (`syncline_session`, `__Host-syncline_session` under https); ' +
        'a write with the cookie also needs `X-CSRF-Token` (from GET /api/v1/auth/session) and an `Origin` of PUBLIC_BASE_URL. ' +
        'Errors are `{ "error": { "code", "message" } }`.',
    )
    .setVersion('1')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'sk_<prefix>_<secret>',
      description: 'An API key, from `cli create-workspace` or POST /api/v1/api-keys.',
    })
    .addCookieAuth('syncline_session', {
      type: 'apiKey',
      in: 'cookie',
      description: 'A signed-in member’s session (magic link or OpenID Connect).',
    })
    .build();
  // A factory, so the document is built on first request rather than at every start.
  SwaggerModule.setup(DOCS_PATH, app, () => SwaggerModule.createDocument(app, document), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    yamlDocumentUrl: `${DOCS_PATH}/yaml`,
  });
}
