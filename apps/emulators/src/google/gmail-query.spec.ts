import { describe, expect, it } from 'vitest';
import { compileGmailQuery, type SearchableMessage } from './gmail-query';

const now = Date.UTC(2030, 5, 15);
const message: SearchableMessage = {
  from: 'Lee Park <lee@example.com>',
  to: 'dana@example.com',
  cc: '',
  subject: 'Quarterly review',
  snippet: 'Numbers attached',
  messageId: '<m-1@example.com>',
  labelIds: ['INBOX', 'UNREAD'],
  internalDate: Date.UTC(2030, 5, 10),
};

describe('compileGmailQuery', () => {
  it.each([
    ['from:lee@example.com', true],
    ['from:sam@example.com', false],
    ['subject:"quarterly review"', true],
    ['after:2030/06/01 before:2030/06/11', true],
    ['after:2030/06/11', false],
    [`after:${Date.UTC(2030, 5, 9) / 1000}`, true],
    ['newer_than:7d', true],
    ['newer_than:2d', false],
    ['older_than:1d', true],
    ['in:inbox is:unread', true],
    ['label:sent', false],
    ['-label:sent numbers', true],
    ['rfc822msgid:m-1@example.com', true],
  ])('%s → %s', (q, expected) => {
    expect(compileGmailQuery(q, now)(message)).toBe(expected);
  });
});
