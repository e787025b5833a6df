import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { OperatorAuth } from '../../common/auth/access';
import { ReqMeta, RequestMeta } from '../../common/auth/current-principal.decorator';
import { UuidParam } from '../../common/http/uuid-param';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { CreateApiKeyDto, CreatedApiKeyDto } from './dto/api-key.dto';
import { CreateOrganizationDto, OrganizationDto, OrganizationPageDto } from './dto/organization.dto';
import { OrganizationsService } from './organizations.service';

const OPERATOR = { kind: 'operator' } as const;

@ApiTags('Operator')
@OperatorAuth()
@Controller('admin/v1/organizations')
export class OperatorController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Post()
  @ApiOperation({ operationId: 'createOrganization', summary: 'Create an organization (webhooks and whitelist start disabled)' })
  async create(@Body() body: CreateOrganizationDto, @ReqMeta() meta: RequestMeta): Promise<OrganizationDto> {
    return OrganizationDto.from(await this.organizations.createOrganization(body.name, OPERATOR, meta));
  }

  @Get()
  @ApiOperation({ operationId: 'listOrganizations', summary: 'List organizations' })
  async list(@Query() query: PageQueryDto): Promise<OrganizationPageDto> {
    const page = await this.organizations.listOrganizations(query.pageSize, query.pageKey);
    return { organizations: page.items.map((organization) => OrganizationDto.from(organization)), nextPageKey: page.nextPageKey };
  }

  @Post(':organizationId/api-keys')
  @ApiOperation({
    operationId: 'createOrganizationApiKey',
    summary: 'Create an API key for an organization; the key is shown only in this answer',
  })
  @ApiUnprocessableEntityResponse({ description: 'API_KEY_LIMIT_REACHED: the organization has the most active keys allowed.' })
  async createKey(
    @UuidParam('organizationId') organizationId: string,
    @Body() body: CreateApiKeyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedApiKeyDto> {
    const { apiKey, key } = await this.organizations.createApiKey(organizationId, body, OPERATOR, meta);
    return CreatedApiKeyDto.from(apiKey, key);
  }

  @Delete(':organizationId/api-keys/:apiKeyId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeOrganizationApiKey', summary: 'Revoke an API key (refused everywhere within 5 s)' })
  async revokeKey(
    @UuidParam('organizationId') organizationId: string,
    @UuidParam('apiKeyId') apiKeyId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    await this.organizations.revokeApiKey(organizationId, apiKeyId, OPERATOR, meta);
  }
}
