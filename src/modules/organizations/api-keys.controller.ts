import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey, ReqMeta, RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { ApiKeyDto, ApiKeyPageDto, CreateApiKeyDto, CreatedApiKeyDto } from './dto/api-key.dto';
import { OrganizationsService } from './organizations.service';

@ApiTags('API keys')
@Auth('admin')
@Controller('api/organization/v1/current-organization/api-keys')
export class ApiKeysController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get()
  @ApiOperation({ operationId: 'listApiKeys', summary: "List the organization's API keys (never their secrets)" })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: PageQueryDto): Promise<ApiKeyPageDto> {
    const page = await this.organizations.listApiKeys(key.organizationId, query.pageSize, query.pageKey);
    return { apiKeys: page.items.map((apiKey) => ApiKeyDto.from(apiKey)), nextPageKey: page.nextPageKey };
  }

  @Post()
  @ApiOperation({ operationId: 'createApiKey', summary: 'Create an API key; the key is shown only in this answer' })
  @ApiUnprocessableEntityResponse({ description: 'API_KEY_LIMIT_REACHED: the organization has the most active keys allowed.' })
  async create(@CurrentKey() key: ApiKeyPrincipal, @Body() body: CreateApiKeyDto, @ReqMeta() meta: RequestMeta): Promise<CreatedApiKeyDto> {
    const created = await this.organizations.createApiKey(key.organizationId, body, key, meta);
    return CreatedApiKeyDto.from(created.apiKey, created.key);
  }

  @Delete(':apiKeyId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke an API key' })
  async revoke(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('apiKeyId') apiKeyId: string, @ReqMeta() meta: RequestMeta): Promise<void> {
    await this.organizations.revokeApiKey(key.organizationId, apiKeyId, key, meta);
  }
}
