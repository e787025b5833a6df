import { Transform } from 'class-transformer';
import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsISO8601, IsOptional, IsUUID } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { formatUtc } from '../../../common/time';
import { WEBHOOK_TYPES, WebhookType } from '../../domain-events/domain-event.catalogue';
import type { LoggedAttempt } from '../webhook-delivery.repository';
import { DELIVERY_STATUSES, DeliveryStatus, WebhookDelivery } from '../webhook-delivery.entity';
import { pick } from '../../../common/pick';

export class WebhookListQueryDto extends PageQueryDto {
  /** Only webhooks in this state. */
  @ApiProperty({ enum: DELIVERY_STATUSES, required: false })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;

  /** Only webhooks sent to this endpoint (the default endpoint's id is the organization's). */
  @ApiProperty({ required: false, format: 'uuid' })
  @IsOptional()
  @IsUUID()
  endpointId?: string;

  /** Only webhooks of these types; repeat the parameter for several (`?webhookType=nft&webhookType=transaction`). */
  @ApiProperty({ enum: WEBHOOK_TYPES, isArray: true, required: false })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? [value] : value))
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_TYPES.length)
  @IsIn(WEBHOOK_TYPES, { each: true })
  webhookType?: WebhookType[];

  /** Only webhooks created at or after this instant (ISO 8601 with an offset). */
  @ApiProperty({ type: String, format: 'date-time', required: false, example: '2026-11-22T00:00:00.000000+00:00' })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  since?: string;

  /** Only webhooks created before this instant (ISO 8601 with an offset); later than `since`. */
  @ApiProperty({ type: String, format: 'date-time', required: false, example: '2026-11-23T00:00:00.000000+00:00' })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  until?: string;
}

export const REPLAY_STATUSES = ['failed', 'all'] as const;
export type ReplayStatus = (typeof REPLAY_STATUSES)[number];

export class ReplayWebhooksDto {
  /** Webhooks created at or after this instant (ISO 8601 with an offset). */
  @ApiProperty({ type: String, format: 'date-time', example: '2026-11-22T00:00:00.000000+00:00' })
  @IsISO8601({ strict: true, strictSeparator: true })
  since: string;

  /** Webhooks created before this instant; default now. */
  @ApiProperty({ type: String, format: 'date-time', required: false })
  @IsOptional()
  @IsISO8601({ strict: true, strictSeparator: true })
  until?: string;

  /** `failed` (default): only webhooks that failed for good; `all`: succeeded ones too. Pending ones are already on their way. */
  @ApiProperty({ enum: REPLAY_STATUSES, required: false, default: 'failed' })
  @IsOptional()
  @IsIn(REPLAY_STATUSES)
  status?: ReplayStatus;

  /** Only webhooks of this endpoint. */
  @ApiProperty({ required: false, format: 'uuid' })
  @IsOptional()
  @IsUUID()
  endpointId?: string;

  /** Only webhooks of these types. */
  @ApiProperty({ enum: WEBHOOK_TYPES, isArray: true, required: false })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_TYPES.length)
  @IsIn(WEBHOOK_TYPES, { each: true })
  webhookTypes?: WebhookType[];
}

export class ReplayAcceptedDto {
  /** How many webhooks will be sent again. */
  count: number;
}

export class TestWebhookDto {
  /** Type of the test webhook; defaults to the first subscribed type. */
  @ApiProperty({ enum: WEBHOOK_TYPES, required: false })
  @IsOptional()
  @IsIn(WEBHOOK_TYPES)
  webhookType?: WebhookType;
}

export class AcceptedWebhookDto {
  /** The webhook id (also the `id` in its body and the x-service-webhook-id header). */
  id: string;
}

export class WebhookSummaryDto {
  /** The webhook's id: the body `id`, stable across retries, redeliveries and replays. */
  id: string;
  /** The endpoint it is sent to (the default endpoint's id is the organization's). */
  endpointId: string;
  /** The event it reports, shared by the webhooks of one event (x-service-webhook-event-id). */
  eventId: string;
  @ApiProperty({ enum: WEBHOOK_TYPES })
  webhookType: string;
  resourceType: string;
  resourceId: string;
  action: string;
  @ApiProperty({ enum: DELIVERY_STATUSES })
  status: DeliveryStatus;
  attemptCount: number;
  createdAtUtc: string;
  @ApiProperty({ type: String, nullable: true })
  lastAttemptAtUtc: string | null;
  /** When the next attempt is due; null once succeeded or failed. */
  @ApiProperty({ type: String, nullable: true })
  nextAttemptAtUtc: string | null;
  @ApiProperty({ type: Number, nullable: true })
  lastResponseStatus: number | null;
  /**
   * Its place among the webhooks of one resourceId to an endpoint with `ordering: resource` (the
   * `x-service-webhook-sequence` header); null for an unordered endpoint.
   */
  @ApiProperty({
    type: Number,
    nullable: true,
    example: null,
    description:
      'Its place among the webhooks of one resourceId to an endpoint with `ordering: resource` (sent as the header ' +
      '`x-service-webhook-sequence`, the same on every retry); null for an unordered endpoint.',
  })
  sequence: number | null;

  static from(delivery: WebhookDelivery): WebhookSummaryDto {
    return {
      ...pick(delivery, 'id', 'endpointId', 'eventId', 'webhookType', 'resourceType', 'resourceId', 'action', 'status', 'attemptCount'),
      createdAtUtc: formatUtc(delivery.createdAt),
      lastAttemptAtUtc: formatUtc(delivery.lastAttemptAt),
      nextAttemptAtUtc: delivery.status === 'pending' ? formatUtc(delivery.nextAttemptAt) : null,
      lastResponseStatus: delivery.lastResponseStatus,
      sequence: delivery.sequence === null || delivery.sequence === undefined ? null : Number(delivery.sequence),
    };
  }
}

export class WebhookAttemptDto {
  attempt: number;
  startedAtUtc: string;
  durationMs: number;
  /** HTTP status the receiver answered; null when no answer came (timeout, connection error). */
  @ApiProperty({ type: Number, nullable: true })
  responseStatus: number | null;
  /**
   * Why the attempt did not succeed; null when it did. An attempt under way reads
   * `in flight: no answer recorded yet`, one whose worker stopped mid-request
   * `the worker stopped before the attempt completed`.
   */
  @ApiProperty({ type: String, nullable: true })
  error: string | null;
  /**
   * The first 1,024 bytes of the body the receiver answered, as UTF-8 text (invalid sequences
   * replaced with U+FFFD); an empty string for an empty body; null when no answer came.
   */
  @ApiProperty({ type: String, nullable: true, maxLength: 1024 })
  responseBody: string | null;
  /**
   * The endpoint's in-flight limit when the attempt started. For an endpoint with `maxInFlight`:
   * its adaptive limit, how many attempts, across every worker, it was then allowed at once
   * (between 1 and its `maxInFlight`; it grows while the receiver's latency holds, falls when
   * latency grows or it answers 429 or 503, times out or cannot be reached). For one without: the
   * fixed limit per worker process (WEBHOOK_PER_RECEIVER_CONCURRENCY). Null when the attempt made
   * no request, is still under way, or was recorded before limits adapted.
   */
  @ApiProperty({ type: 'integer', nullable: true, minimum: 1, maximum: 1000, example: 10 })
  inFlightLimit: number | null;

  static from(attempt: LoggedAttempt): WebhookAttemptDto {
    return {
      attempt: attempt.attempt,
      startedAtUtc: formatUtc(attempt.startedAt),
      durationMs: attempt.durationMs,
      responseStatus: attempt.responseStatus,
      error: attempt.error,
      responseBody: attempt.responseBody,
      inFlightLimit: attempt.inFlightLimit,
    };
  }
}

export class WebhookDetailDto extends WebhookSummaryDto {
  /** The body exactly as sent (README.md, "Webhooks"). */
  @ApiProperty({ type: 'object', additionalProperties: true })
  payload: Record<string, unknown>;
  attempts: WebhookAttemptDto[];

  static fromLog(delivery: WebhookDelivery, attempts: readonly LoggedAttempt[]): WebhookDetailDto {
    return {
      ...WebhookSummaryDto.from(delivery),
      payload: JSON.parse(delivery.payload) as Record<string, unknown>,
      attempts: attempts.map((attempt) => WebhookAttemptDto.from(attempt)),
    };
  }
}

export class WebhookPageDto {
  webhooks: WebhookSummaryDto[];
  nextPageKey: string | null;
}
