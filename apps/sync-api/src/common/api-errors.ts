import { BadRequestException, HttpException, type HttpStatus } from '@nestjs/common';
import { z } from 'zod';

/** The error codes the API answers with, in `{ "error": { "code", "message" } }`. */
export const API_ERROR_CODES = [
  'bad_request',
  'validation_failed',
  'invalid_payload',
  'invalid_signature',
  'unauthorized',
  'forbidden',
  'not_found',
  // A record's past asked for a time before it existed (GET …/{id}/as-of).
  'not_yet_existing',
  'method_not_allowed',
  'conflict',
  'precondition_failed',
  'payload_too_large',
  'uri_too_long',
  // Node's HTTP parser refused the request before the app saw it (common/client-error.ts).
  'headers_too_large',
  'request_timeout',
  'unsupported_media_type',
  'rate_limited',
  'unavailable',
  'internal',
  // The OAuth connect flow (connections/oauth): its callback is authorised by the state alone.
  'oauth_state_invalid',
  'oauth_consent_denied',
  'oauth_failed',
  // Connection lifecycle (connections): a transition the connection's status does not allow.
  'credentials_required',
  'connection_paused',
  'connection_disconnected',
  // Connection credentials (POST /connections, PUT …/credentials): the provider must name the account.
  'account_mismatch',
  'account_unproven',
  'credentials_refused',
  // Field mappings (connections/{id}/mappings): a mapping the provider's properties cannot carry.
  'mappings_unsupported',
  'unknown_property',
  'property_type_mismatch',
  'property_taken',
  'property_reserved',
  // Identity review (possible duplicates, merges, unmerges): what a merge or its undo refuses.
  'same_record',
  'type_mismatch',
  'already_merged',
  'already_undone',
  'not_a_merge',
  'not_applied',
  'merged_since',
  // Replays (POST /api/v1/replays): one per workspace at a time.
  'replay_running',
  // Sign-in (auth/): a cookie-authenticated write without its CSRF token or from another origin;
  // a magic link used, expired or unknown (one answer for all three).
  'csrf_failed',
  'link_invalid',
  // Members (/api/v1/members): the workspace keeps an admin; an address is a member once.
  'last_admin',
  'member_exists',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export const apiErrorBody = z.object({
  error: z.object({ code: z.enum(API_ERROR_CODES), message: z.string() }),
});
export type ApiErrorBody = z.output<typeof apiErrorBody>;

/** An error raised on purpose with a code more precise than its status's default. */
export class CodedHttpException extends HttpException {
  constructor(
    status: HttpStatus,
    readonly code: ApiErrorCode,
    message: string,
    /** Ids the caller can act on (`replayId` of the replay in the way), beside code and message. */
    readonly details: Readonly<Record<string, string>> = {},
  ) {
    super(message, status);
  }
}

/** Where a rejected value came from: the request part, and the parameter name if one was asked for. */
export interface ValueLocation {
  part: string;
  name?: string | undefined;
}

/** A request part (body, query, a route param) that did not match its schema. */
export class ValidationFailedException extends BadRequestException {
  constructor(
    readonly issues: readonly z.core.$ZodIssue[],
    location: ValueLocation,
  ) {
    super(`invalid request: ${issues.map((issue) => describeIssue(issue, location)).join('; ')}`);
  }
}

// Zod's messages state what was expected, never the rejected value, so a secret sent in
// the wrong field is not echoed back.
function describeIssue(issue: z.core.$ZodIssue, { part, name }: ValueLocation): string {
  const path = [name, ...issue.path.map(String)].filter((segment) => segment !== undefined);
  return `${path.length > 0 ? path.join('.') : part}: ${issue.message}`;
}
