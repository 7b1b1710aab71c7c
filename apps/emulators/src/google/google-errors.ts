import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

export interface GoogleErrorItem {
  domain: string;
  reason: string;
  message: string;
  locationType?: 'header' | 'parameter';
  location?: string;
}

export interface GoogleErrorBody {
  error: { errors: GoogleErrorItem[]; code: number; message: string };
}

/** An API error rendered in Google's `{ error: { errors, code, message } }` shape. */
export class GoogleApiError extends Error {
  constructor(
    readonly code: number,
    readonly item: GoogleErrorItem,
  ) {
    super(item.message);
  }

  body(): GoogleErrorBody {
    return { error: { errors: [this.item], code: this.code, message: this.item.message } };
  }
}

const FULL_SYNC_MESSAGE = 'Sync token is no longer valid, a full sync is required.';
const RATE_LIMIT_MESSAGE = 'Rate Limit Exceeded';

/** The errors the emulator answers with, named by Google's reason. */
export const googleErrors = {
  invalid: (message: string, location?: string) =>
    new GoogleApiError(400, {
      domain: 'global',
      reason: 'invalid',
      message,
      ...(location ? { locationType: 'parameter' as const, location } : {}),
    }),
  required: (message: string, location?: string) =>
    new GoogleApiError(400, {
      domain: 'global',
      reason: 'required',
      message,
      ...(location ? { locationType: 'parameter' as const, location } : {}),
    }),
  parseError: (message: string) =>
    new GoogleApiError(400, { domain: 'global', reason: 'parseError', message }),
  timeRangeEmpty: () =>
    new GoogleApiError(400, {
      domain: 'calendar',
      reason: 'timeRangeEmpty',
      message: 'The specified time range is empty.',
    }),
  loginRequired: () =>
    new GoogleApiError(401, {
      domain: 'global',
      reason: 'required',
      message: 'Login Required.',
      locationType: 'header',
      location: 'Authorization',
    }),
  authError: () =>
    new GoogleApiError(401, {
      domain: 'global',
      reason: 'authError',
      message: 'Invalid Credentials',
      locationType: 'header',
      location: 'Authorization',
    }),
  forbidden: (message: string) => new GoogleApiError(403, { domain: 'global', reason: 'forbidden', message }),
  notFound: (message = 'Not Found') =>
    new GoogleApiError(404, { domain: 'global', reason: 'notFound', message }),
  /** Gmail's answer to a `startHistoryId` older than the history it keeps. */
  historyNotFound: () =>
    new GoogleApiError(404, {
      domain: 'global',
      reason: 'notFound',
      message: 'Requested entity was not found.',
    }),
  duplicate: () =>
    new GoogleApiError(409, {
      domain: 'global',
      reason: 'duplicate',
      message: 'The requested identifier already exists.',
    }),
  deleted: () =>
    new GoogleApiError(410, { domain: 'global', reason: 'deleted', message: 'Resource has been deleted' }),
  fullSyncRequired: () =>
    new GoogleApiError(410, {
      domain: 'calendar',
      reason: 'fullSyncRequired',
      message: FULL_SYNC_MESSAGE,
      locationType: 'parameter',
      location: 'syncToken',
    }),
  conditionNotMet: () =>
    new GoogleApiError(412, {
      domain: 'global',
      reason: 'conditionNotMet',
      message: 'Precondition Failed',
      locationType: 'header',
      location: 'If-Match',
    }),
  rateLimited: (status: 403 | 429) =>
    status === 403
      ? new GoogleApiError(403, {
          domain: 'usageLimits',
          reason: 'userRateLimitExceeded',
          message: RATE_LIMIT_MESSAGE,
        })
      : new GoogleApiError(429, {
          domain: 'usageLimits',
          reason: 'rateLimitExceeded',
          message: RATE_LIMIT_MESSAGE,
        }),
  backendError: () =>
    new GoogleApiError(500, { domain: 'global', reason: 'backendError', message: 'Backend Error' }),
};

/** A control-API failure: plain `{ error }` JSON, like the shared control routes answer. */
export class ControlApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** Renders every failure on the Google port in Google's shape, so googleapis surfaces it as an API error. */
export function googleErrorHandler(
  error: FastifyError | Error,
  _req: FastifyRequest,
  reply: FastifyReply,
): void {
  if (error instanceof GoogleApiError) {
    void reply.code(error.code).send(error.body());
    return;
  }
  if (error instanceof ControlApiError) {
    void reply.code(error.statusCode).send({ error: error.message });
    return;
  }
  const status = 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : 500;
  const mapped =
    status === 415
      ? googleErrors.invalid('Unsupported content type.')
      : status < 500
        ? googleErrors.parseError(error.message)
        : googleErrors.backendError();
  void reply.code(mapped.code).send(mapped.body());
}
