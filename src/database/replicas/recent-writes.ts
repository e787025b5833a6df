import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { createRedisConnection, RedisConnection } from '../../common/redis/redis-connection';
import { AppConfig } from '../../config/app-config';
import { withinDeadline } from './deadline';
import { PROBE_INTERVAL_MS } from './replica-monitor.service';

/** A Redis answer slower than this sends the read to the primary rather than delay it. */
const REDIS_WAIT_MS = 250;

/**
 * Which callers wrote recently, shared by every instance through Redis (a key per caller that
 * expires), so that a read right after a write goes to the primary wherever it lands. The window
 * is the lag bound plus one probe interval: a replica read up to one probe ago as within the bound
 * may by now be that much further behind.
 */
@Injectable()
export class RecentWrites implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RecentWrites');
  private readonly redis: RedisConnection;
  private readonly windowMs: number;
  /** This instance's own writes, which hold even while Redis is away. */
  private readonly local = new Map<string, number>();

  constructor(private readonly config: AppConfig) {
    this.redis = createRedisConnection(config, 'recent-writes');
    this.windowMs = config.replicas.maxLagMs + PROBE_INTERVAL_MS;
  }

  onModuleInit(): void {
    // ioredis keeps reconnecting on its own; until it is up, reads go to the primary.
    this.redis.connect().catch(() => undefined);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }

  private key(caller: string): string {
    return `${this.config.queuePrefix}:recent-write:${caller}`;
  }

  async mark(caller: string): Promise<void> {
    const now = Date.now();
    this.local.set(caller, now + this.windowMs);
    for (const [key, until] of this.local) if (until <= now) this.local.delete(key);
    try {
      await withinDeadline(this.redis.set(this.key(caller), '1', 'PX', this.windowMs), REDIS_WAIT_MS);
    } catch (error) {
      // The write itself succeeded: answering it matters more than other instances' reads.
      this.logger.warn(`could not share a write of ${caller} with other instances: ${(error as Error).message}`);
    }
  }

  /** Whether `caller` wrote within the window; true when Redis cannot tell, so the primary answers. */
  async wroteRecently(caller: string): Promise<boolean> {
    if ((this.local.get(caller) ?? 0) > Date.now()) return true;
    try {
      return (await withinDeadline(this.redis.exists(this.key(caller)), REDIS_WAIT_MS)) > 0;
    } catch {
      return true;
    }
  }
}
