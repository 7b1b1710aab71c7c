import { createTransport, type Transporter } from 'nodemailer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorControl } from '../control-client';
import { type RunningEmulators, startEmulators } from '../emulators';

let emulators: RunningEmulators;
let smtp: Transporter;

beforeAll(async () => {
  emulators = await startEmulators({ hubspotPort: 0, googlePort: 0 });
  smtp = createTransport({ url: emulators.smtpUrl });
});

afterAll(async () => {
  smtp.close();
  await emulators.close();
});

beforeEach(async () => {
  await emulatorControl(emulators.googleUrl).mail.clear();
});

describe('the mail catch-all', () => {
  it('listens on its own port, given as an smtp:// URL', () => {
    expect(emulators.smtpUrl).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
    expect(emulators.smtpUrl).not.toBe('smtp://127.0.0.1:4025');
  });

  it('accepts a message for any address without authentication, parsed, on both control ports', async () => {
    const sent = await smtp.sendMail({
      from: 'Syncline <no-reply@syncline.test>',
      to: 'Ada@Example.com',
      bcc: 'audit@elsewhere.test',
      subject: 'Your sign-in link',
      text: 'Open https://sync.example.test/sign-in/link#token=abc',
      html: '<p><a href="https://sync.example.test/sign-in/link#token=abc">Sign in</a></p>',
    });
    expect(sent.accepted).toHaveLength(2);
    expect(sent.rejected).toEqual([]);

    for (const port of [emulators.googleUrl, emulators.hubspotUrl]) {
      const [message, ...others] = await emulatorControl(port).mail.messages('ada@example.com');
      expect(others).toEqual([]);
      expect(message).toEqual({
        id: expect.any(String),
        from: 'no-reply@syncline.test',
        to: ['ada@example.com', 'audit@elsewhere.test'],
        subject: 'Your sign-in link',
        text: 'Open https://sync.example.test/sign-in/link#token=abc',
        html: '<p><a href="https://sync.example.test/sign-in/link#token=abc">Sign in</a></p>',
        receivedAt: expect.any(String),
      });
      expect(Date.now() - Date.parse(message?.receivedAt ?? '')).toBeLessThan(60_000);
    }
  });

  it("lists one recipient's messages newest first, and every message without ?to", async () => {
    const send = (to: string, subject: string) =>
      smtp.sendMail({ from: 'a@syncline.test', to, subject, text: subject });
    await send('ines@example.com', 'first');
    await send('someone@example.com', 'other');
    await send('ines@example.com', 'second');

    const control = emulatorControl(emulators.googleUrl);
    expect((await control.mail.messages('ines@example.com')).map((m) => m.subject)).toEqual([
      'second',
      'first',
    ]);
    expect((await control.mail.messages('nobody@example.com')).length).toBe(0);
    expect((await control.mail.messages()).map((m) => m.subject)).toEqual(['second', 'other', 'first']);
    expect((await control.mail.messages('ines@example.com'))[0]?.html).toBeNull();
  });

  it('forgets every message on DELETE and on /_emulator/reset', async () => {
    const control = emulatorControl(emulators.hubspotUrl);
    await smtp.sendMail({ from: 'a@syncline.test', to: 'x@example.com', subject: 's', text: 't' });
    expect(await control.mail.messages()).toHaveLength(1);
    await control.mail.clear();
    expect(await control.mail.messages()).toHaveLength(0);

    await smtp.sendMail({ from: 'a@syncline.test', to: 'x@example.com', subject: 's', text: 't' });
    await control('POST', '/_emulator/reset');
    expect(await emulatorControl(emulators.googleUrl).mail.messages()).toHaveLength(0);
  });
});
