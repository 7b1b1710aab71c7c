import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { InjectPinoLogger, PinoLogger } from 'nestjs-pino';
import {
  type ApiErrorBody,
  type ApiErrorCode,
  CodedHttpException,
  ValidationFailedException,
} from './api-errors';

const CODE_BY_STATUS: Partial<Record<number, ApiErrorCode>> = {
  [HttpStatus.BAD_REQUEST]: 'bad_request',
  [HttpStatus.UNAUTHORIZED]: 'unauthorized',
  [HttpStatus.FORBIDDEN]: 'forbidden',
  [HttpStatus.NOT_FOUND]: 'not_found',
  [HttpStatus.METHOD_NOT_ALLOWED]: 'method_not_allowed',
  [HttpStatus.CONFLICT]: 'conflict',
  [HttpStatus.PRECONDITION_FAILED]: 'precondition_failed',
  [HttpStatus.PAYLOAD_TOO_LARGE]: 'payload_too_large',
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: 'unsupported_media_type',
  [HttpStatus.TOO_MANY_REQUESTS]: 'rate_limited',
  [HttpStatus.SERVICE_UNAVAILABLE]: 'unavailable',
};

/**
 * Renders every error as `{ "error": { "code", "message" } }`. Errors raised on purpose keep
 * their message (we wrote it, or Fastify did about the request); anything else is a bug,
 * logged in full here and answered with a bare `internal`, so no stack or driver detail leaks.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@InjectPinoLogger(ApiExceptionFilter.name) private readonly logger: PinoLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = this.render(exception);
    if (body.error.code === 'unauthorized') reply.header('www-authenticate', 'Bearer');
    void reply.status(status).send(body);
  }

  private render(exception: unknown): { status: number; body: ApiErrorBody } {
    if (exception instanceof ValidationFailedException) {
      return { status: HttpStatus.BAD_REQUEST, body: errorBody('validation_failed', exception.message) };
    }
    if (exception instanceof CodedHttpException) {
      const body = errorBody(exception.code, exception.message);
      return { status: exception.getStatus(), body: { error: { ...exception.details, ...body.error } } };
    }
    const status = deliberateStatus(exception);
    const code = status === undefined ? undefined : CODE_BY_STATUS[status];
    if (status !== undefined && code !== undefined) {
      return { status, body: errorBody(code, (exception as Error).message) };
    }
    this.logger.error({ err: exception }, 'unhandled error');
    return { status: HttpStatus.INTERNAL_SERVER_ERROR, body: errorBody('internal', 'internal error') };
  }
}

function errorBody(code: ApiErrorCode, message: string): ApiErrorBody {
  return { error: { code, message } };
}

/** The status of an error raised on purpose: an HttpException, or Fastify rejecting the request (bad JSON, too large). */
function deliberateStatus(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  if (exception instanceof Error && 'code' in exception && 'statusCode' in exception) {
    const { code, statusCode } = exception;
    const fromFastify = typeof code === 'string' && code.startsWith('FST_');
    if (fromFastify && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500)
      return statusCode;
  }
  return undefined;
}
