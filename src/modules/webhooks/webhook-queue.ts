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
export function deliverJobOptions(webhookId: string, priority?: number, delayMs?: number): JobOptions {
  return {
    jobId: webhookId,
    ...(delayMs ? { delay: delayMs } : {}),
    attempts: 100_000,
    backoff: { type: RETRY_BACKOFF },
    removeOnComplete: true,
    removeOnFail: true,
    ...(priority ? { priority } : {}),
  };
}

/**
 * One webhook (retries, recovery, redelivery and test sends: the job id is the webhook id), or a
 * group of newly relayed webhooks (`webhookIds`), so that a burst costs one queue job per group
 * instead of one per webhook. Every webhook of a group is still its own POST; one that needs
 * another look later leaves the group as a job of its own.
 */
export interface DeliverJobData {
  webhookId?: string;
  webhookIds?: string[];
}

/** Newly relayed webhooks per group job. */
export const WEBHOOKS_PER_GROUP_JOB = 10;

/** Group jobs of the relay; the id is derived from the group, so relaying it again is a no-op. */
export function groupJobs(ids: readonly string[]): { name: string; data: DeliverJobData; opts: JobOptions }[] {
  const jobs: { name: string; data: DeliverJobData; opts: JobOptions }[] = [];
  for (let i = 0; i < ids.length; i += WEBHOOKS_PER_GROUP_JOB) {
    const group = ids.slice(i, i + WEBHOOKS_PER_GROUP_JOB);
    if (group.length === 1) {
      jobs.push({ name: DELIVER_JOB, data: { webhookId: group[0] }, opts: deliverJobOptions(group[0]) });
    } else {
      const jobId = `group-${group[0]}-${group[group.length - 1]}-${group.length}`;
      jobs.push({ name: DELIVER_JOB, data: { webhookIds: group }, opts: deliverJobOptions(jobId) });
    }
  }
  return jobs;
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
