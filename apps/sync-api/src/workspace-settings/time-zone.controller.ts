import { Body, Controller, Get, Headers, HttpStatus, Inject, Put, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { header } from '../common/headers';
import {
  ifMatchTimeZoneVersion,
  type ReplaceTimeZoneBody,
  replaceTimeZoneBody,
  type TimeZoneView,
  timeZoneView,
} from './time-zone.schemas';
import { TimeZoneService } from './time-zone.service';

const APPLIES =
  'A new zone goes on the change log as it is saved; the sync stage then recomputes every ' +
  "record's activity insights in it (`inForce` shows the zone the current results are cut in).";

/** The workspace's time zone. Every member and key reads it; admins change it. */
@ApiTags('workspace')
@ApiBearerAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/workspace')
export class TimeZoneController {
  constructor(@Inject(TimeZoneService) private readonly zones: TimeZoneService) {}

  @ApiOkResponse({
    description: `The zone the workspace's days are cut in; \`ETag\` carries the setting's version. ${APPLIES}`,
    standardSchema: timeZoneView,
  })
  @Get('time-zone')
  async get(
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TimeZoneView> {
    return withEtag(reply, await this.zones.get(principal));
  }

  @ApiOkResponse({
    description: `The zone set under the next version and audited; the same zone again changes nothing. ${APPLIES}`,
    standardSchema: timeZoneView,
  })
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description: "The setting's version (`version`, `ETag`): change it only if nobody has since.",
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.PRECONDITION_FAILED)
  @Roles('admin')
  @Put('time-zone')
  async replace(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: replaceTimeZoneBody }) body: ReplaceTimeZoneBody,
    @Headers('if-match') ifMatch: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TimeZoneView> {
    const expected = header(ifMatchTimeZoneVersion, ifMatch, 'If-Match');
    return withEtag(reply, await this.zones.replace(principal, body, expected));
  }
}

function withEtag(reply: FastifyReply, view: TimeZoneView): TimeZoneView {
  reply.header('etag', `"${view.version}"`);
  return view;
}
