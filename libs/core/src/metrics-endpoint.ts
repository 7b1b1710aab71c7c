import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What an app's metrics endpoint needs: where, what to render, and where to say what happened. */
export interface MetricsEndpointOptions {
  host: string;
  port: number;
  /** The setting that names the port, for the log line when it cannot be taken. */
  setting: string;
  render: () => Promise<string>;
  contentType: string;
  logger: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * Serves `GET /metrics` on a port of its own (the apps' own ports are public, or have none).
 * Metrics never stop an app: a port already taken is logged and undefined returned, and the app
 * runs on without the endpoint.
 */
export async function serveMetrics(options: MetricsEndpointOptions): Promise<Server | undefined> {
  const { host, port, render, contentType, logger } = options;
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    render().then(
      (body) => response.writeHead(200, { 'content-type': contentType }).end(body),
      (error: unknown) => {
        logger.error({ err: error }, 'metrics: render failed');
        response.writeHead(500).end();
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    logger.error(
      { err: error, port },
      `metrics endpoint not started (${options.setting}); running without it`,
    );
    return undefined;
  }
  logger.info({ host, port: boundPort(server) }, 'metrics served at /metrics');
  return server;
}

/** The port a server listens on, once listening. */
export function boundPort(server: Server | undefined): number | undefined {
  const address = server?.address();
  return typeof address === 'object' && address !== null ? (address as AddressInfo).port : undefined;
}

/** Closes a metrics endpoint, its open connections too. */
export async function closeMetrics(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
