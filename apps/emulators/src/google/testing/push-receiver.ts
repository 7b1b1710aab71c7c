import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPush {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP endpoint for watch notifications and Pub/Sub pushes, answering with `status`. */
export class PushReceiver {
  readonly received: ReceivedPush[] = [];
  status = 200;
  private waiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<PushReceiver> {
    let receiver: PushReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver?.record({
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.statusCode = receiver?.status ?? 200;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new PushReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** Resolves once `count` requests have arrived in all (or fails after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 5000): Promise<ReceivedPush[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} pushes, got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received.slice(0, count);
  }

  /** Waits a little and returns what arrived: for asserting that nothing (more) came. */
  async settle(ms = 300): Promise<ReceivedPush[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return [...this.received];
  }

  clear(): void {
    this.received.length = 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private record(push: ReceivedPush): void {
    this.received.push(push);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
