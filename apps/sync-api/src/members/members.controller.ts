import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Patch,
  Post,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import {
  type ChangeMemberBody,
  changeMemberBody,
  type InviteMemberBody,
  inviteMemberBody,
  type MemberListView,
  type MemberView,
  memberListView,
  memberView,
} from './members.schemas';
import { MembersService } from './members.service';

@ApiTags('members')
@ApiBearerAuth()
@ApiCookieAuth()
@ApiErrorResponses(HttpStatus.UNAUTHORIZED)
@Controller('api/v1/members')
export class MembersController {
  constructor(@Inject(MembersService) private readonly members: MembersService) {}

  @ApiOkResponse({
    description:
      "The workspace's members and invitations (removed ones left out). Open to salespeople too: they pick owners by name.",
    standardSchema: memberListView,
  })
  @Get()
  list(@CurrentPrincipal() principal: Principal): Promise<MemberListView> {
    return this.members.list(principal);
  }

  @ApiCreatedResponse({
    description:
      'Invited (`status: invited`) and mailed a sign-in link; they become active at their first sign-in. A removed member with that address is invited again.',
    standardSchema: memberView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.CONFLICT)
  @Roles('admin')
  @Post()
  invite(
    @CurrentPrincipal() principal: Principal,
    @Body({ schema: inviteMemberBody }) body: InviteMemberBody,
  ): Promise<MemberView> {
    return this.members.invite(principal, body);
  }

  @ApiOkResponse({
    description:
      'The new role holds from the member’s next request. 409 `last_admin`: the workspace would have no active admin left.',
    standardSchema: memberView,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND, HttpStatus.CONFLICT)
  @Roles('admin')
  @Patch(':id')
  change(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Body({ schema: changeMemberBody }) body: ChangeMemberBody,
  ): Promise<MemberView> {
    return this.members.changeRole(principal, id, body.role);
  }

  @ApiNoContentResponse({
    description:
      'Removed; their sessions end at once. 409 `last_admin`: the workspace would have no active admin left.',
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.FORBIDDEN, HttpStatus.NOT_FOUND, HttpStatus.CONFLICT)
  @Roles('admin')
  @HttpCode(HttpStatus.NO_CONTENT)
  @Delete(':id')
  remove(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
  ): Promise<void> {
    return this.members.remove(principal, id);
  }
}
