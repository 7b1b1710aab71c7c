import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookRequest } from '../../contract/connector';

/**
 * A real HTTP endpoint for Graph's change notifications, as the webhook route sees them: it
 * answers the validation handshake (`?validationToken=…` echoed as text/plain, which Graph
 * requires before it creates a subscription) and records every notification POST.
 */
export class GraphNotificationReceiver {
  readonly received: WebhookRequest[] = [];
  readonly validations: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<GraphNotificationReceiver> {
    let receiver: GraphNotificationReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (!receiver) return res.writeHead(503).end();
        const full = `${receiver.url.replace(/\/hook$/, '')}${req.url ?? '/'}`;
        const token = new URL(full).searchParams.get('validationToken');
        if (token !== null) {
          receiver.validations.push(token);
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end(token);
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
        receiver.received.push({
          method: req.method ?? 'POST',
          url: full,
          headers,
          rawBody: Buffer.concat(chunks).toString('utf8'),
          receivedAt: new Date(),
        });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new GraphNotificationReceiver(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    );
    return receiver;
  }

  async waitFor(predicate: (r: WebhookRequest) => boolean, timeoutMs = 5_000): Promise<WebhookRequest> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching notification within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
