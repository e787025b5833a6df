import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { UUID_PATTERN } from '../../../common/pagination/page-key';
import {
  DEFAULT_STATS_BUCKET,
  STATS_BUCKET_NAMES,
  STATS_TIMESTAMP_MESSAGE,
  STATS_TIMESTAMP_PATTERN,
  StatsBucketSize,
} from './webhook-stats.rules';

const TIMESTAMP_EXAMPLE = '2026-11-22T01:00:00.000000+00:00';

export class WebhookStatsQueryDto {
  /** Start of the window, inclusive (ISO 8601 with an offset). Default: 24 hours before `until`. */
  @ApiProperty({ type: String, required: false, format: 'date-time', example: TIMESTAMP_EXAMPLE })
  @IsOptional()
  @IsString()
  @Matches(STATS_TIMESTAMP_PATTERN, { message: STATS_TIMESTAMP_MESSAGE })
  since?: string;

  /** End of the window, exclusive (ISO 8601 with an offset). Default: now. */
  @ApiProperty({ type: String, required: false, format: 'date-time', example: TIMESTAMP_EXAMPLE })
  @IsOptional()
  @IsString()
  @Matches(STATS_TIMESTAMP_PATTERN, { message: STATS_TIMESTAMP_MESSAGE })
  until?: string;

  /** Bucket size, aligned in UTC: a minute or an hour. */
  @ApiProperty({ enum: STATS_BUCKET_NAMES, required: false, default: DEFAULT_STATS_BUCKET })
  @IsOptional()
  @IsIn(STATS_BUCKET_NAMES)
  bucket?: StatsBucketSize;

  /** Only the webhooks sent to this endpoint (the default endpoint's id is the organization's id). */
  @ApiProperty({ type: String, required: false, format: 'uuid' })
  @IsOptional()
  @IsString()
  @Matches(UUID_PATTERN, { message: 'endpointId must be a UUID' })
  endpointId?: string;
}

export class WebhookStatsBucketDto {
  /** Start of the bucket (its size is the `bucket` asked for); the first and last are cut by the window. */
  @ApiProperty({ type: String, format: 'date-time', example: TIMESTAMP_EXAMPLE })
  startUtc: string;

  /** Webhooks created in the bucket that are now `succeeded`. */
  @ApiProperty({ type: Number, minimum: 0 })
  succeeded: number;

  /** Webhooks created in the bucket that are now `failed` (every attempt of their retry schedule failed). */
  @ApiProperty({ type: Number, minimum: 0 })
  failed: number;

  /** Webhooks created in the bucket that needed more than one attempt (`attemptCount > 1`), whatever their status. */
  @ApiProperty({ type: Number, minimum: 0 })
  retried: number;

  /**
   * Median delivery latency of the bucket's succeeded webhooks: from the webhook's creation to its
   * successful attempt (the latest, after a redelivery or replay), retries included, in whole
   * milliseconds; null when none succeeded.
   */
  @ApiProperty({ type: Number, nullable: true, minimum: 0 })
  p50Ms: number | null;

  /** 99th percentile of the same latencies (interpolated, as PostgreSQL's percentile_cont); null when none succeeded. */
  @ApiProperty({ type: Number, nullable: true, minimum: 0 })
  p99Ms: number | null;
}

export class WebhookStatsDto {
  /** Every bucket of the window, oldest first; an empty bucket has zeros and null latencies. */
  @ApiProperty({ type: [WebhookStatsBucketDto] })
  buckets: WebhookStatsBucketDto[];
}
