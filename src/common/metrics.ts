import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry for the process. Modules add their own instruments here so /metrics shows
 * everything in one scrape.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [metricsRegistry],
});

export function counter<L extends string>(name: string, help: string, labelNames: readonly L[]) {
  return (metricsRegistry.getSingleMetric(name) as Counter<L>) ?? new Counter({ name, help, labelNames, registers: [metricsRegistry] });
}

/** `collect` runs at scrape time, for values sampled rather than counted. */
export function gauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect?: (this: Gauge<L>) => Promise<void>) {
  return (
    (metricsRegistry.getSingleMetric(name) as Gauge<L>) ??
    new Gauge({ name, help, labelNames, registers: [metricsRegistry], ...(collect ? { collect } : {}) })
  );
}

export function histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) {
  return (
    (metricsRegistry.getSingleMetric(name) as Histogram<L>) ??
    new Histogram({ name, help, labelNames, buckets, registers: [metricsRegistry] })
  );
}
