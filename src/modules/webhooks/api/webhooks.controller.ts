// api/: the delivery log, redelivery, replay and test sends as the organization's API shows them (no sending here).
import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Auth } from '../../../common/auth/access';
import { CurrentKey, ReqMeta, RequestMeta } from '../../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../../common/auth/principal';
import { UuidParam } from '../../../common/http/uuid-param';
import { OrganizationSendLimit } from '../../../common/rate-limit/organization-send-limit';
import {
  AcceptedWebhookDto,
  ReplayAcceptedDto,
  ReplayWebhooksDto,
  TestWebhookDto,
  WebhookDetailDto,
  WebhookListQueryDto,
  WebhookPageDto,
  WebhookSummaryDto,
} from './webhook.dto';
import { WebhooksService } from './webhooks.service';

@ApiTags('Webhooks')
@Auth('admin')
@Controller('api/organization/v1/current-organization')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get('webhooks')
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'Delivery log, newest first',
    description:
      'Filters combine: `status`, `endpointId`, `webhookType` (repeatable) and a creation-time window `since` (inclusive) ' +
      'to `until` (exclusive). Each is served by an index, so a narrow filter over a long log stays fast.',
  })
  @ApiBadRequestResponse({ description: 'VALIDATION_FAILED: a bad filter, or `until` not later than `since`.' })
  async list(@CurrentKey() key: ApiKeyPrincipal, @Query() query: WebhookListQueryDto): Promise<WebhookPageDto> {
    const page = await this.webhooks.page(
      key.organizationId,
      { status: query.status, endpointId: query.endpointId, webhookTypes: query.webhookType, since: query.since, until: query.until },
      query.pageSize,
      query.pageKey,
    );
    return { webhooks: page.items.map((delivery) => WebhookSummaryDto.from(delivery)), nextPageKey: page.nextPageKey };
  }

  @Post('webhooks/replay')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'replayWebhooks',
    summary: 'Send again every webhook created in a time window, by status, endpoint and types',
    description:
      'Each selected webhook is sent again with its own id and body, re-signed at send time, with a fresh retry ' +
      'cycle. `status` `failed` (default) selects the webhooks that failed for good, `all` the succeeded ones too; ' +
      'pending ones are already on their way. At most 10,000 per call, audited. Replays have a budget of their own ' +
      'per organization, counted in the webhooks they queue (WEBHOOK_REPLAYS_PER_HOUR, default 100,000), and are ' +
      'never charged to the send limit of test sends and redeliveries.',
  })
  @ApiAcceptedResponse({ type: ReplayAcceptedDto })
  @ApiTooManyRequestsResponse({
    description:
      "RATE_LIMITED: the replay would queue more webhooks than are left of the organization's replay budget for the hour; nothing is queued; see Retry-After.",
  })
  @ApiNotFoundResponse({ description: 'WEBHOOK_ENDPOINT_NOT_FOUND: endpointId names no endpoint of the organization.' })
  @ApiUnprocessableEntityResponse({
    description:
      'REPLAY_TOO_LARGE: more than 10,000 webhooks match; narrow the window or filters. OUTSIDE_RETENTION: `since` is earlier than WEBHOOK_RETENTION keeps webhooks.',
  })
  async replay(
    @CurrentKey() key: ApiKeyPrincipal,
    @Body() body: ReplayWebhooksDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ReplayAcceptedDto> {
    return { count: await this.webhooks.replay(key, body, meta) };
  }

  @Get('webhooks/:webhookId')
  @ApiOperation({ operationId: 'getWebhook', summary: 'One webhook with its body as sent and every attempt' })
  async get(@CurrentKey() key: ApiKeyPrincipal, @UuidParam('webhookId') id: string): Promise<WebhookDetailDto> {
    const { delivery, attempts } = await this.webhooks.get(key.organizationId, id);
    return WebhookDetailDto.fromLog(delivery, attempts);
  }

  @Post('webhooks/:webhookId/redeliver')
  @OrganizationSendLimit()
  @HttpCode(202)
  @ApiOperation({ operationId: 'redeliverWebhook', summary: 'Send a webhook again: same id and body, signed with the current secret' })
  @ApiAcceptedResponse({ type: AcceptedWebhookDto })
  @ApiUnprocessableEntityResponse({
    description: 'WEBHOOK_CONFIG_INCOMPLETE: url or sharedSecret missing. WEBHOOK_ENDPOINT_DELETED: its endpoint no longer exists.',
  })
  async redeliver(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('webhookId') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AcceptedWebhookDto> {
    return { id: await this.webhooks.redeliver(key, id, meta) };
  }

  @Post('webhook-config/test')
  @OrganizationSendLimit()
  @HttpCode(202)
  @ApiOperation({ operationId: 'testWebhookConfig', summary: 'Send a WebhookTest webhook to the configured url' })
  @ApiAcceptedResponse({ type: AcceptedWebhookDto })
  @ApiUnprocessableEntityResponse({ description: 'WEBHOOK_CONFIG_INCOMPLETE: url or sharedSecret missing.' })
  async test(@CurrentKey() key: ApiKeyPrincipal, @Body() body: TestWebhookDto, @ReqMeta() meta: RequestMeta): Promise<AcceptedWebhookDto> {
    return { id: await this.webhooks.sendTest(key, body.webhookType, meta) };
  }

  @Post('webhook-endpoints/:endpointId/test')
  @OrganizationSendLimit()
  @HttpCode(202)
  @ApiOperation({
    operationId: 'testWebhookEndpoint',
    summary: 'Send a WebhookTest webhook to one endpoint, whatever its enabled switch and types say',
  })
  @ApiAcceptedResponse({ type: AcceptedWebhookDto })
  @ApiNotFoundResponse({ description: 'WEBHOOK_ENDPOINT_NOT_FOUND' })
  async testEndpoint(
    @CurrentKey() key: ApiKeyPrincipal,
    @UuidParam('endpointId') endpointId: string,
    @Body() body: TestWebhookDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AcceptedWebhookDto> {
    return { id: await this.webhooks.sendTest(key, body.webhookType, meta, endpointId) };
  }
}
