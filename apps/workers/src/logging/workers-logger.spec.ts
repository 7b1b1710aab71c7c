import { describe, expect, it } from 'vitest';
import { loadWorkersConfig } from '../config/workers-config';
import { createWorkersLogger } from '../workers';

describe("the workers' log", () => {
  it('redacts every query parameter whose name holds key, token, secret, password, code or state', () => {
    const lines: string[] = [];
    const logger = createWorkersLogger(loadWorkersConfig({ LOG_LEVEL: 'info' }), {
      write: (line: string) => void lines.push(line),
    });
    const providerError = new Error(
      'GET https://www.googleapis.com/calendar/v3/events?access_token=tok-1&pageToken=tok-2&maxResults=50 failed',
    );
    logger.error(
      { err: providerError, url: 'https://api.example/cb?Code=tok-3&STATE=tok-4&ok=1' },
      'pull failed',
    );
    logger.warn(`retrying https://api.hubapi.com/crm/v3?hapikey=tok-5#top and /x?client_secret=tok-6`);
    logger.child({ jobId: 'j1' }).info({ next: '/cb%3Fpassword%3Dtok-7' }, 'child line');

    expect(lines).toHaveLength(3);
    for (const line of lines) JSON.parse(line);
    const all = lines.join('');
    for (let n = 1; n <= 7; n++) expect(all).not.toContain(`tok-${n}`);
    expect(all).toContain('maxResults=50');
    expect(all).toContain('ok=1');
    expect(all).toContain('access_token=[redacted]');
  });
});
