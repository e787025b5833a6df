import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../../../common/auth/access';
import { CurrentKey } from '../../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../../common/auth/principal';
import { WebhookStatsDto, WebhookStatsQueryDto } from './webhook-stats.dto';
import { MAX_STATS_BUCKETS } from './webhook-stats.rules';
import { WebhookStatsService } from './webhook-stats.service';

/**
 * A controller of its own, registered before WebhooksController: Express matches routes in the
 * order they are registered, and `GET …/webhooks/:webhookId` would otherwise take `stats` for a
 * webhook id.
 */
@ApiTags('Webhooks')
@Auth('admin')
@Controller('api/organization/v1/current-organization/webhooks/stats')
export class WebhookStatsController {
  constructor(private readonly stats: WebhookStatsService) {}

  @Get()
  @ApiOperation({
    operationId: 'getWebhookStats',
    summary: 'Delivery statistics per minute or hour',
    description:
      'Counts the webhooks created in [`since`, `until`) (default: the 24 hours before now), in buckets of `bucket` ' +
      '(`1m` or `1h`, default `1h`) aligned in UTC, from the bucket holding `since` to the one holding the last instant ' +
      'before `until`; every bucket is present, an empty one with zeros and null latencies. A webhook is counted in the ' +
      'bucket of its creation time (when its event was judged for the endpoint), by its status now: `succeeded` and ' +
      '`failed` count the webhooks created in the bucket that are now in that status (pending ones are in neither); ' +
      '`retried` counts those that needed more than one attempt (`attemptCount > 1`). `p50Ms` and `p99Ms` are ' +
      'percentiles (PostgreSQL percentile_cont, rounded to whole milliseconds) of the delivery latency of the ' +
      "bucket's succeeded webhooks, from creation to the successful attempt, retries included; null when none " +
      `succeeded. \`endpointId\` narrows to one endpoint. At most ${MAX_STATS_BUCKETS} buckets per answer.`,
  })
  @ApiOkResponse({ type: WebhookStatsDto })
  @ApiBadRequestResponse({
    description:
      'VALIDATION_FAILED: a timestamp that is not ISO 8601 with an offset, `since` not before `until`, an unknown ' +
      `bucket, more than ${MAX_STATS_BUCKETS} buckets in the window, or an endpointId that is not a UUID.`,
  })
  async get(@CurrentKey() key: ApiKeyPrincipal, @Query() query: WebhookStatsQueryDto): Promise<WebhookStatsDto> {
    return { buckets: await this.stats.buckets(key.organizationId, query) };
  }
}
