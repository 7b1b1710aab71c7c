import { Controller, Get, HttpStatus, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { type AuditLogPage, type AuditLogQuery, auditLogPage, auditLogQuery } from './audit-log.schemas';
import { AuditLogService } from './audit-log.service';

@ApiTags('audit-log')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN)
@Roles('admin')
@Controller('api/v1/audit-log')
export class AuditLogController {
  constructor(@Inject(AuditLogService) private readonly audit: AuditLogService) {}

  @ApiOkResponse({
    description: "The workspace's admin actions, newest first.",
    standardSchema: auditLogPage,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST)
  @Get()
  list(
    @CurrentPrincipal() principal: Principal,
    @Query({ schema: auditLogQuery }) query: AuditLogQuery,
  ): Promise<AuditLogPage> {
    return this.audit.list(principal, query);
  }
}
