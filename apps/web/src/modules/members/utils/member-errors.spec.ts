import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../api/errors';
import { looksLikeEmail, memberChangeError } from './member-errors';

describe('memberChangeError', () => {
  it('explains the last admin refusal and what to do', () => {
    const error = new ApiError({ status: 409, code: 'last_admin', message: 'the workspace would be left…' });
    expect(memberChangeError(error)).toEqual({
      title: 'The workspace needs an admin',
      message: expect.stringContaining('Make another member admin first'),
    });
  });

  it('explains an address that is a member already, and a member removed meanwhile', () => {
    expect(memberChangeError(new ApiError({ status: 409, code: 'member_exists', message: 'x' })).title).toBe(
      'Already a member',
    );
    expect(memberChangeError(new ApiError({ status: 404, code: 'not_found', message: 'x' })).title).toBe(
      'No longer a member',
    );
  });

  it("passes any other error's own words on", () => {
    expect(
      memberChangeError(new ApiError({ status: 400, code: 'validation_failed', message: 'bad email' })),
    ).toEqual({ title: 'The request was refused', message: 'bad email' });
  });
});

describe('looksLikeEmail', () => {
  it('takes an address and refuses what is plainly not one', () => {
    expect(looksLikeEmail(' ada@example.com ')).toBe(true);
    expect(looksLikeEmail('ada@example')).toBe(false);
    expect(looksLikeEmail('ada example.com')).toBe(false);
  });
});
