import { counter, gauge, histogram } from '../../../common/metrics';
import type { AttemptOutcome } from './webhook-sender';

export const webhookAttempts = counter('webhook_attempts_total', 'Webhook delivery attempts by outcome', ['outcome'] as const);

export const webhookDeliveryLatency = histogram(
  'webhook_delivery_latency_seconds',
  'Time from the committed change to the receiver answering 2xx',
  [] as const,
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
);

/**
 * Each endpoint's adaptive in-flight limit (shared by the workers through Redis), as this process
 * last learned it from Redis: set by the workers that deliver to the endpoint.
 */
export const endpointInFlightLimit = gauge(
  'webhook_endpoint_in_flight_limit',
  'The current adaptive limit of attempts in flight to an endpoint, across workers',
  ['endpoint_id'] as const,
);

type Sampler = () => Promise<Record<string, number>>;
const queueDepthSamplers = new Set<Sampler>();
const outboxLagSamplers = new Set<() => Promise<number>>();

/** Sampled at scrape time from whichever live process registered a sampler first. */
gauge('webhook_queue_depth', 'Webhook jobs in the queue by state', ['state'] as const, async function collect() {
  for (const sample of queueDepthSamplers) {
    const counts = await sample().catch(() => null);
    if (!counts) continue;
    for (const [state, value] of Object.entries(counts)) this.set({ state }, value);
    return;
  }
});

gauge('outbox_lag_seconds', 'Age of the oldest domain event not yet judged for delivery', [] as const, async function collect() {
  for (const sample of outboxLagSamplers) {
    const lag = await sample().catch(() => null);
    if (lag === null) continue;
    this.set(lag);
    return;
  }
});

export function registerQueueDepthSampler(sampler: Sampler): () => void {
  queueDepthSamplers.add(sampler);
  return () => queueDepthSamplers.delete(sampler);
}

export function registerOutboxLagSampler(sampler: () => Promise<number>): () => void {
  outboxLagSamplers.add(sampler);
  return () => outboxLagSamplers.delete(sampler);
}

export function countAttempt(outcome: AttemptOutcome): void {
  webhookAttempts.inc({ outcome });
}
