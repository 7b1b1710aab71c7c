import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Json = Record<string, unknown>;

/** How the receiver answers Graph's validation handshake. */
export type HandshakeMode = 'echo' | 'wrong-echo' | 'silent';

/**
 * A real HTTP endpoint for Graph's webhooks: answers the validation handshake per `handshake`,
 * and each notification POST with `status` (or 500 for the next `failNext` ones).
 */
export class NotificationReceiver {
  /** Each notification POST's body, in arrival order. */
  readonly posts: { value: Json[] }[] = [];
  readonly validations: string[] = [];
  handshake: HandshakeMode = 'echo';
  status = 202;
  failNext = 0;
  private readonly hung: ServerResponse[] = [];
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<NotificationReceiver> {
    let receiver: NotificationReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => receiver?.answer(req.url ?? '/', Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new NotificationReceiver(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    );
    return receiver;
  }

  /** Every notification received so far, across POSTs. */
  get notifications(): Json[] {
    return this.posts.flatMap((p) => p.value);
  }

  /** Resolves once `count` notifications have arrived in all (or fails after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 5000): Promise<Json[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.notifications.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} notifications, got ${this.notifications.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.notifications;
  }

  /** Waits a little and returns what arrived: for asserting that nothing (more) came. */
  async settle(ms = 300): Promise<Json[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.notifications;
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(url: string, body: string, res: ServerResponse): void {
    const token = new URL(url, 'http://receiver').searchParams.get('validationToken');
    if (token !== null) {
      this.validations.push(token);
      if (this.handshake === 'silent') {
        this.hung.push(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(this.handshake === 'echo' ? token : `not ${token}`);
      return;
    }
    if (this.failNext > 0) {
      this.failNext--;
      res.writeHead(500).end();
      return;
    }
    this.posts.push(JSON.parse(body) as { value: Json[] });
    res.writeHead(this.status).end();
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
