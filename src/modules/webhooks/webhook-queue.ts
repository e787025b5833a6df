import type { JobOptions } from 'bull';

export const WEBHOOK_QUEUE = 'webhooks';
/** Where an organization's burst goes, so it does not queue ahead of other organizations. */
export const WEBHOOK_BULK_QUEUE = 'webhooks-bulk';
/** Events per organization within 10 s that still count as ordinary traffic. */
export const BURST_THRESHOLD = 200;
export const DELIVER_JOB = 'deliver';
export const RETRY_BACKOFF = 'webhook-retry';

/**
 * A job only says "look at this webhook now"; PostgreSQL holds the webhook's state, so a job can
 * run twice, or be lost with Redis, without a webhook being sent twice in a row or never. The
 * job id is the webhook id, which makes enqueueing idempotent while a job is waiting or delayed.
 * Attempts are counted in PostgreSQL against the retry schedule, so Bull's own limit is only a
 * backstop.
 */
export function deliverJobOptions(webhookId: string, priority?: number): JobOptions {
  return {
    jobId: webhookId,
    attempts: 100_000,
    backoff: { type: RETRY_BACKOFF },
    removeOnComplete: true,
    removeOnFail: true,
    ...(priority ? { priority } : {}),
  };
}

export interface DeliverJobData {
  webhookId: string;
}

/** Thrown by the processor so that Bull runs the job again after `delayMs`. */
export class RetryLaterError extends Error {
  constructor(
    readonly delayMs: number,
    reason: string,
  ) {
    super(reason);
    this.name = 'RetryLaterError';
  }
}

/** Bull's custom backoff: the processor decides the delay (schedule, jitter, receiver busy). */
export function retryBackoff(_attemptsMade: number, error: Error): number {
  return error instanceof RetryLaterError || typeof (error as { delayMs?: unknown }).delayMs === 'number'
    ? Math.max(1, (error as RetryLaterError).delayMs)
    : 1000;
}
