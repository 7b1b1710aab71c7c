import { Inject, Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import { createTransport, type Transporter } from 'nodemailer';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

/**
 * Sends the app's few mails (sign-in links, invitations) through SMTP_URL. Without it,
 * nothing is sent and each mail is logged as dropped, without its body (it holds a link
 * that signs in).
 */
@Injectable()
export class Mailer implements OnModuleDestroy {
  private readonly transport: Transporter | undefined;
  private readonly from: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectPinoLogger(Mailer.name) private readonly logger: PinoLogger,
  ) {
    this.from = config.MAIL_FROM;
    this.transport = config.SMTP_URL === undefined ? undefined : createTransport(config.SMTP_URL);
  }

  /** False when the mail could not be handed to the SMTP server (logged). */
  async send(mail: OutgoingMail): Promise<boolean> {
    if (this.transport === undefined) {
      this.logger.warn({ subject: mail.subject }, 'SMTP_URL is not set: mail dropped');
      return false;
    }
    try {
      await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
      return true;
    } catch (error) {
      this.logger.error({ err: error, subject: mail.subject }, 'mail could not be sent');
      return false;
    }
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }
}

@Module({ providers: [Mailer], exports: [Mailer] })
export class MailModule {}
