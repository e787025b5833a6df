import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppConfig } from '../../config/app-config';
import { metricsRegistry } from '../../common/metrics';

/** How long one collection of the metrics text is served: a scrape flood costs one collection per window. */
export const METRICS_CACHE_MS = 2000;

/**
 * The Prometheus text, collected at most once per METRICS_CACHE_MS (collection queries the
 * database and Redis for queue depth and outbox lag); concurrent scrapes share one collection.
 */
@Injectable()
export class MetricsText {
  private cached: { at: number; text: Promise<string> } | null = null;

  constructor(
    private readonly collect: () => Promise<string> = () => metricsRegistry.metrics(),
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<string> {
    const now = this.now();
    if (this.cached && now - this.cached.at < METRICS_CACHE_MS) return this.cached.text;
    const text = this.collect();
    const entry = { at: now, text };
    this.cached = entry;
    // A failed collection is not served again from the cache.
    text.catch(() => {
      if (this.cached === entry) this.cached = null;
    });
    return text;
  }
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * With METRICS_PORT set, /metrics is served without a token on a listener of its own, bound to
 * METRICS_HOST (127.0.0.1 by default), so only the network that can reach that address scrapes.
 */
@Injectable()
export class MetricsListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly text: MetricsText,
  ) {}

  /** The bound address (tests), null when there is no listener of its own. */
  address(): AddressInfo | null {
    return (this.server?.address() as AddressInfo | null) ?? null;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { port, host } = this.config.metrics;
    if (port === null) return;
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end('Not found\n');
        return;
      }
      this.text.get().then(
        (body) =>
          res
            .writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' })
            .end(req.method === 'HEAD' ? undefined : body),
        (error: unknown) => {
          this.logger.warn({ err: error }, 'metrics collection failed');
          res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end('Metrics unavailable\n');
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics served on http://${host}:${port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
