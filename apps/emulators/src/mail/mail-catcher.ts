import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message the catch-all received, as the control API lists it. */
export interface CaughtMail {
  id: string;
  from: string;
  /** Everyone the message was delivered to (the SMTP envelope: To, Cc and Bcc alike). */
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  receivedAt: string;
}

/** Enough for any test or demo session; the oldest are forgotten first. */
const KEPT_MESSAGES = 1000;

/**
 * An SMTP server that accepts every message for any address, without authentication or TLS,
 * and keeps it in memory: where the demo and the tests send magic links, to read them back.
 */
export class MailCatcher {
  private messages: CaughtMail[] = [];
  private readonly server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData: (stream, session, done) => {
      simpleParser(stream)
        .then((parsed) => {
          const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          this.keep({
            id: randomUUID(),
            from: parsed.from?.value[0]?.address ?? envelopeFrom,
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: parsed.html || null,
            receivedAt: new Date().toISOString(),
          });
          done();
        })
        .catch((error: unknown) => done(error instanceof Error ? error : new Error(String(error))));
    },
  });

  /** Starts listening; 0 picks a free port. Answers `smtp://host:port`. */
  async listen(host: string, port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return `smtp://${host}:${(this.server.server.address() as AddressInfo).port}`;
  }

  /** Newest first; only those delivered to `to` when given. */
  list(to?: string): CaughtMail[] {
    const address = to?.trim().toLowerCase();
    return this.messages.filter((m) => address === undefined || m.to.includes(address)).reverse();
  }

  clear(): void {
    this.messages = [];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private keep(message: CaughtMail): void {
    this.messages.push(message);
    if (this.messages.length > KEPT_MESSAGES) this.messages.shift();
  }
}
