import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Auth } from '../../common/auth/access';
import { CurrentKey, ReqMeta, RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { UuidParam } from '../../common/http/uuid-param';
import { PageQueryDto } from '../../common/pagination/page-query.dto';
import { filterMatches } from './content-filter.rules';
import { MqttDestinationDto, NatsDestinationDto, RabbitMqDestinationDto } from './dto/destination.dto';
import { FilterTestRequestDto, FilterTestResponseDto } from './dto/filter-test.dto';
import { RotateSecretDto } from './dto/rotate-secret.request.dto';
import { parseContentFilter } from './receiver-choices.rules';
import { RotateSecretResponseDto } from './dto/rotate-secret.response.dto';
import { CreateWebhookEndpointDto, UpdateWebhookEndpointDto } from './dto/webhook-endpoint.request.dto';
import { CreatedWebhookEndpointDto, WebhookEndpointDto, WebhookEndpointPageDto } from './dto/webhook-endpoint.response.dto';
import { WebhookEndpointsService } from './webhook-endpoints.service';

const ENDPOINT_ID = {
  name: 'endpointId',
  description: "The endpoint's id; the organization's id addresses its default endpoint (the webhook configuration).",
  schema: { type: 'string', format: 'uuid' },
} as const;
const NOT_FOUND = { description: "WEBHOOK_ENDPOINT_NOT_FOUND: no such endpoint (another organization's is as unknown)." };

@ApiTags('Webhook endpoints')
@ApiExtraModels(RabbitMqDestinationDto, NatsDestinationDto, MqttDestinationDto)
@Auth('admin')
@Controller('api/organization/v1/current-organization/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listWebhookEndpoints',
    summary: "List the organization's webhook endpoints: the default one first, then the others in creation order",
    description: 'Secrets are never shown, only `hasSharedSecret`.',
  })
  @ApiOkResponse({ type: WebhookEndpointPageDto })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: PageQueryDto): Promise<WebhookEndpointPageDto> {
    const page = await this.endpoints.list(key.organizationId, query.pageSize, query.pageKey);
    return { endpoints: page.items.map((endpoint) => WebhookEndpointDto.from(endpoint)), nextPageKey: page.nextPageKey };
  }

  @Post()
  @ApiOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Add a webhook endpoint beside the default one',
    description:
      'At most 20 endpoints per organization, the default one included. Without `sharedSecret` the ' +
      'service generates one (32 random bytes, base64url) and returns it once, in this answer only. ' +
      '`enabled` defaults to true. An endpoint posts to a `url` or publishes to a broker `destination` ' +
      '(RabbitMQ, NATS JetStream, MQTT 5): exactly one of them.',
  })
  @ApiCreatedResponse({ type: CreatedWebhookEndpointDto })
  @ApiBadRequestResponse({
    description:
      'VALIDATION_FAILED (e.g. a url the deployment refuses, both or neither of url and destination, a destination field naming ' +
      '`destination.<field>`) or INVALID_ADDRESS naming each bad contract address.',
  })
  @ApiUnprocessableEntityResponse({ description: 'ENDPOINT_LIMIT_REACHED: the organization already has 20 endpoints.' })
  async create(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: CreateWebhookEndpointDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedWebhookEndpointDto> {
    const created = await this.endpoints.create(key.organizationId, body, key, meta);
    return CreatedWebhookEndpointDto.fromCreated(created.endpoint, created.sharedSecret);
  }

  @Post('filter-test')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'testWebhookFilter',
    summary: 'Whether a content filter matches an event, judged by the code delivery uses',
    description: 'Nothing is stored. Try a filter on an event from the delivery log (its `payload`, with `webhookType`) before setting it.',
  })
  @ApiOkResponse({ type: FilterTestResponseDto })
  @ApiBadRequestResponse({
    description: 'VALIDATION_FAILED: the filter is invalid; `errors[].field` names the path (`filter.$or[1].action.$foo`).',
  })
  filterTest(@Body() body: FilterTestRequestDto): FilterTestResponseDto {
    return { matches: filterMatches(parseContentFilter(body.filter) ?? {}, body.event) };
  }

  @Get(':endpointId')
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'One webhook endpoint' })
  @ApiParam(ENDPOINT_ID)
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiNotFoundResponse(NOT_FOUND)
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('endpointId') endpointId: string): Promise<WebhookEndpointDto> {
    return WebhookEndpointDto.from(await this.endpoints.get(key.organizationId, endpointId));
  }

  @Patch(':endpointId')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'updateWebhookEndpoint',
    summary: 'Change any subset of url, webhookTypes, sharedSecret, enabled, description and filters',
    description:
      'Fields left out keep their value; an empty body changes nothing. `sharedSecret` replaces the secret at ' +
      'once and drops any previous one. Setting `enabled` clears `disabledReason`. On the default endpoint this ' +
      'is PATCH webhook-config: same rules, and no description or filters.',
  })
  @ApiParam(ENDPOINT_ID)
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiUnprocessableEntityResponse({
    description:
      'DEFAULT_ENDPOINT: description, filters or a destination sent for the default endpoint. WEBHOOK_CONFIG_INCOMPLETE: the ' +
      'default endpoint would be enabled without url or shared secret.',
  })
  async update(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('endpointId') endpointId: string,
    @Body() body: UpdateWebhookEndpointDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookEndpointDto> {
    return WebhookEndpointDto.from(await this.endpoints.update(key.organizationId, endpointId, body ?? {}, key, meta));
  }

  @Delete(':endpointId')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWebhookEndpoint', summary: 'Delete a webhook endpoint; its pending webhooks stop' })
  @ApiParam(ENDPOINT_ID)
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiUnprocessableEntityResponse({ description: 'DEFAULT_ENDPOINT: the default endpoint cannot be deleted (disable it instead).' })
  async delete(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('endpointId') endpointId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    await this.endpoints.delete(key.organizationId, endpointId, key, meta);
  }

  @Post(':endpointId/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateWebhookEndpointSecret',
    summary: "Replace the endpoint's shared secret while the old one keeps signing for a while",
    description:
      'As POST webhook-config/rotate-secret, for this endpoint: the new secret (given, or generated and returned ' +
      'once) signs from now on, and the replaced one signs beside it until `previousSecretExpiresAtUtc`.',
  })
  @ApiParam(ENDPOINT_ID)
  @ApiOkResponse({ type: RotateSecretResponseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiUnprocessableEntityResponse({ description: 'WEBHOOK_CONFIG_INCOMPLETE: the default endpoint has no shared secret to rotate yet.' })
  async rotateSecret(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('endpointId') endpointId: string,
    @Body() body: RotateSecretDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<RotateSecretResponseDto> {
    return RotateSecretResponseDto.from(await this.endpoints.rotateSecret(key.organizationId, endpointId, body ?? {}, key, meta));
  }
}
