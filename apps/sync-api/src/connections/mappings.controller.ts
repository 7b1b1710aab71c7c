import { Body, Controller, Get, Headers, HttpStatus, Inject, Param, Put, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { CurrentPrincipal, Roles } from '../auth/auth.decorators';
import type { Principal } from '../auth/principal';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { apiErrorBody } from '../common/api-errors';
import { header } from '../common/headers';
import {
  type MappingRevisionPage,
  type MappingRevisionsQuery,
  type MappingsView,
  mappingRevisionPage,
  mappingRevisionsQuery,
  mappingsIfMatch,
  mappingsView,
  type PropertiesQuery,
  type PropertyListView,
  propertiesQuery,
  propertyListView,
  type ReplaceMappingsBody,
  replaceMappingsBody,
} from './mappings.schemas';
import { MappingsService } from './mappings.service';

const APPLIES =
  'New mappings apply to what is read and written from then on (the next pull, webhook and write of the ' +
  'connection; no restart): values already merged stay, and a record is read under them when it next changes.';

/** Per-connection field mappings: unified (or custom) field ↔ provider property. Admin only. */
@ApiTags('connections')
@ApiBearerAuth()
@ApiErrorResponses(
  HttpStatus.UNAUTHORIZED,
  HttpStatus.BAD_REQUEST,
  HttpStatus.FORBIDDEN,
  HttpStatus.NOT_FOUND,
)
@Roles('admin')
@Controller('api/v1/connections/:id/mappings')
export class MappingsController {
  constructor(@Inject(MappingsService) private readonly mappings: MappingsService) {}

  @ApiOkResponse({
    description: `The connection's field mappings and every field in force per entity type; \`ETag\` carries the version. ${APPLIES}`,
    standardSchema: mappingsView,
  })
  @Get()
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MappingsView> {
    return withEtag(reply, await this.mappings.get(principal, id));
  }

  @ApiOkResponse({
    description:
      "The overrides replaced as a whole, checked against the provider (HubSpot: the portal's properties " +
      `API), under the next version, kept as a revision and audited. ${APPLIES}`,
    standardSchema: mappingsView,
  })
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      "The mappings' version (`version`, `ETag`): replace only if nobody has since (as policies do).",
  })
  @ApiResponse({
    status: HttpStatus.BAD_REQUEST,
    description:
      '`validation_failed` (the schema; a field mapped twice); `mappings_unsupported` (a Google connection: ' +
      'fixed fields); `property_taken` (two fields on one property); `unknown_property` (not in the portal); ' +
      "`property_type_mismatch` (the property's type cannot carry the field); `property_reserved` (an id or " +
      'date HubSpot or Syncline keeps). The message names every offending mapping.',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description:
      '`connection_disconnected`: disconnected for good. `credentials_required`: no credentials, or the ' +
      'provider refused them while its properties were read.',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description: '`unavailable`: the provider could not be asked for its properties (retry).',
    standardSchema: apiErrorBody,
  })
  @ApiErrorResponses(HttpStatus.PRECONDITION_FAILED)
  @Put()
  async replace(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Body({ schema: replaceMappingsBody }) body: ReplaceMappingsBody,
    @Headers('if-match') ifMatch: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MappingsView> {
    const expected = header(mappingsIfMatch, ifMatch, 'If-Match');
    return withEtag(reply, await this.mappings.replace(principal, id, body, expected));
  }

  @ApiOkResponse({
    description:
      "The portal's properties a mapping can name for one entity type, custom properties included, read now " +
      "through the provider's properties API (HubSpot: `GET /crm/v3/properties/{objectType}`), with the " +
      'property types each field can use.',
    standardSchema: propertyListView,
  })
  @ApiResponse({
    status: HttpStatus.BAD_REQUEST,
    description:
      '`validation_failed` (the query); `mappings_unsupported` (a Google connection: fixed fields, no properties).',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({
    status: HttpStatus.CONFLICT,
    description:
      '`connection_disconnected`: disconnected for good. `credentials_required`: no credentials, or the ' +
      'provider refused them.',
    standardSchema: apiErrorBody,
  })
  @ApiResponse({
    status: HttpStatus.SERVICE_UNAVAILABLE,
    description: '`unavailable`: the provider could not be asked for its properties (retry).',
    standardSchema: apiErrorBody,
  })
  @Get('properties')
  properties(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Query({ schema: propertiesQuery }) query: PropertiesQuery,
  ): Promise<PropertyListView> {
    return this.mappings.properties(principal, id, query.entityType);
  }

  @ApiOkResponse({
    description: "The connection's replaced mappings, newest first.",
    standardSchema: mappingRevisionPage,
  })
  @Get('revisions')
  revisions(
    @CurrentPrincipal() principal: Principal,
    @Param('id', { schema: z.uuid() }) id: string,
    @Query({ schema: mappingRevisionsQuery }) query: MappingRevisionsQuery,
  ): Promise<MappingRevisionPage> {
    return this.mappings.revisions(principal, id, query);
  }
}

function withEtag(reply: FastifyReply, view: MappingsView): MappingsView {
  reply.header('etag', `"${view.version}"`);
  return view;
}
