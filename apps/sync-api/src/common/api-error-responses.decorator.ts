import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { apiErrorBody } from './api-errors';

const DESCRIPTIONS: Partial<Record<HttpStatus, string>> = {
  [HttpStatus.BAD_REQUEST]: 'The request does not match its schema (`validation_failed`).',
  [HttpStatus.UNAUTHORIZED]: 'No API key, or a malformed, unknown or revoked one.',
  [HttpStatus.FORBIDDEN]: "The key's role may not do this.",
  [HttpStatus.NOT_FOUND]: 'No such record in this workspace.',
  [HttpStatus.CONFLICT]: 'The record already exists.',
  [HttpStatus.PRECONDITION_FAILED]:
    'The record changed since the version in `If-Match` (`precondition_failed`): read it again, then retry.',
};

/** Documents the error responses a route can give, all in the `{ error: { code, message } }` shape. */
export const ApiErrorResponses = (...statuses: HttpStatus[]) =>
  applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'Error.', standardSchema: apiErrorBody }),
    ),
  );
