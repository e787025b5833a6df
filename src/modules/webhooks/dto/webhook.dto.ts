import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto';
import { formatUtc } from '../../../common/time';
import { WEBHOOK_TYPES, WebhookType } from '../../domain-events/domain-event.catalogue';
import type { WebhookAttempt } from '../webhook-attempt.entity';
import { DELIVERY_STATUSES, DeliveryStatus, WebhookDelivery } from '../webhook-delivery.entity';

export class WebhookListQueryDto extends PageQueryDto {
  /** Only webhooks in this state. */
  @ApiProperty({ enum: DELIVERY_STATUSES, required: false })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
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
  id: string;
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

  static from(delivery: WebhookDelivery): WebhookSummaryDto {
    return {
      id: delivery.id,
      webhookType: delivery.webhookType,
      resourceType: delivery.resourceType,
      resourceId: delivery.resourceId,
      action: delivery.action,
      status: delivery.status,
      attemptCount: delivery.attemptCount,
      createdAtUtc: formatUtc(delivery.createdAt),
      lastAttemptAtUtc: formatUtc(delivery.lastAttemptAt),
      nextAttemptAtUtc: delivery.status === 'pending' ? formatUtc(delivery.nextAttemptAt) : null,
      lastResponseStatus: delivery.lastResponseStatus,
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
  @ApiProperty({ type: String, nullable: true })
  error: string | null;

  static from(attempt: WebhookAttempt): WebhookAttemptDto {
    return {
      attempt: attempt.attempt,
      startedAtUtc: formatUtc(attempt.startedAt),
      durationMs: attempt.durationMs,
      responseStatus: attempt.responseStatus,
      error: attempt.error,
    };
  }
}

export class WebhookDetailDto extends WebhookSummaryDto {
  /** The body exactly as sent (seed 2.5). */
  @ApiProperty({ type: 'object', additionalProperties: true })
  payload: Record<string, unknown>;
  attempts: WebhookAttemptDto[];
}

export class WebhookPageDto {
  webhooks: WebhookSummaryDto[];
  nextPageKey: string | null;
}
