import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ChainableCommander } from 'ioredis';
import { AppConfig, servesApi } from '../../config/app-config';
import { createRedisConnection, queueKeyPrefix, RedisConnection } from '../redis/redis-connection';

/**
 * One fixed window per caller: the first hit starts the window, and the count and expiry change
 * in one atomic step so that every instance sharing Redis sees the same count. ARGV[2] hits are
 * counted at once (the requests of one instance that arrived together).
 */
const HIT_SCRIPT = `
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {hits, ttl}
`;

/**
 * Spends ARGV[2] hits at once, only if they all fit under the limit ARGV[3]; otherwise counts
 * nothing, so a request asking for more than is left is refused without using up the rest.
 */
const SPEND_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if current + tonumber(ARGV[2]) > tonumber(ARGV[3]) then
  return {0, current, ttl}
end
local hits = redis.call('INCRBY', KEYS[1], ARGV[2])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {1, hits, ttl}
`;

/** A slow Redis must not slow the API down: past this, the request goes through uncounted. */
const COMMAND_TIMEOUT_MS = 500;
const WARN_EVERY_MS = 10_000;
const CONNECT_WAIT_MS = 1000;

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;
/** The script queued on a pipeline: the call only queues it (and returns the pipeline); exec() brings the replies. */
type PipelineWithHit = ChainableCommander & { rateLimitHit(key: string, windowMs: number, hits: number): ChainableCommander };
type Waiter = { resolve: (hit: [number, number]) => void; reject: (error: unknown) => void };

/**
 * Rate-limit counts in Redis, shared by every instance. Fails open: when Redis is unreachable
 * the request is allowed and a warning logged, because refusing every API call would turn a
 * Redis outage into a full outage while PostgreSQL, which holds the data, is fine.
 */
@Injectable()
export class RedisThrottlerStorage implements ThrottlerStorage, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: RedisConnection;
  private readonly prefix: string;
  private lastWarnAt = 0;
  private skippedWarnings = 0;
  /** Hits waiting for the next flush, per Redis key (the window is the same for every caller). */
  private pending = new Map<string, { windowMs: number; waiters: Waiter[] }>();
  private flushScheduled = false;

  constructor(private readonly config: AppConfig) {
    this.redis = createRedisConnection(config, 'rate-limit', { commandTimeout: COMMAND_TIMEOUT_MS });
    this.redis.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.redis.defineCommand('rateLimitSpend', { numberOfKeys: 1, lua: SPEND_SCRIPT });
    this.redis.on('error', () => undefined);
    // One hash tag on a cluster: a flush pipelines several callers' keys, which a cluster
    // accepts only when they share a slot.
    this.prefix = `${queueKeyPrefix(config)}:rate-limit:`;
  }

  /** Waits briefly for Redis so the first requests are counted, but never holds start-up for it. */
  async onModuleInit(): Promise<void> {
    if (!servesApi(this.config) || this.redis.status !== 'wait') return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.redis.connect().catch((error: unknown) => this.warn(error)),
      new Promise((resolve) => (timer = setTimeout(resolve, CONNECT_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** A caller over the limit stays blocked until its window ends (Retry-After says when). */
  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    try {
      const [hits, ttlMs] = await this.hit(this.prefix + key, ttl);
      const timeToExpire = Math.max(1, Math.ceil(ttlMs / 1000));
      const isBlocked = hits > limit;
      return { totalHits: hits, timeToExpire, isBlocked, timeToBlockExpire: isBlocked ? timeToExpire : 0 };
    } catch (error) {
      this.warn(error);
      return { totalHits: 0, timeToExpire: Math.ceil(ttl / 1000), isBlocked: false, timeToBlockExpire: 0 };
    }
  }

  /**
   * Counts `hits` at once in `key`'s window if they fit under `limit`, else none: `allowed` says
   * which, `timeToExpire` (seconds) when the window ends. Fails open like `increment`.
   */
  async spend(key: string, ttl: number, limit: number, hits: number): Promise<{ allowed: boolean; timeToExpire: number }> {
    try {
      const client = this.redis as unknown as {
        rateLimitSpend(key: string, windowMs: number, hits: number, limit: number): Promise<number[]>;
      };
      const [allowed, , ttlMs] = await client.rateLimitSpend(this.prefix + key, ttl, hits, limit);
      return { allowed: allowed === 1, timeToExpire: Math.max(1, Math.ceil((ttlMs > 0 ? ttlMs : ttl) / 1000)) };
    } catch (error) {
      this.warn(error);
      return { allowed: true, timeToExpire: Math.ceil(ttl / 1000) };
    }
  }

  /**
   * Counts one hit. Hits that arrive in the same turn of the event loop (a burst of concurrent
   * requests) go to Redis together: one pipelined round trip for all of them, one INCRBY per
   * caller key. The count stays exact across instances: an INCRBY of n that returns T means this
   * instance's n requests were hits T-n+1 .. T, which is what n separate INCRs would have said.
   */
  private hit(key: string, windowMs: number): Promise<[number, number]> {
    return new Promise((resolve, reject) => {
      const entry = this.pending.get(key);
      if (entry) entry.waiters.push({ resolve, reject });
      else this.pending.set(key, { windowMs, waiters: [{ resolve, reject }] });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    this.flushScheduled = false;
    const entries = [...batch.entries()];
    const pipeline = this.redis.pipeline() as PipelineWithHit;
    for (const [key, { windowMs, waiters }] of entries) pipeline.rateLimitHit(key, windowMs, waiters.length);
    let results: [Error | null, unknown][] | null;
    try {
      results = await pipeline.exec();
    } catch (error) {
      for (const [, { waiters }] of entries) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    entries.forEach(([, { waiters }], i) => {
      const [error, reply] = results?.[i] ?? [new Error('no reply from Redis'), null];
      if (error) {
        for (const waiter of waiters) waiter.reject(error);
        return;
      }
      const [total, ttlMs] = reply as [number, number];
      const first = total - waiters.length + 1;
      waiters.forEach((waiter, n) => waiter.resolve([first + n, ttlMs]));
    });
  }

  /** One line per interval at most: an outage would otherwise log once per request. */
  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) {
      this.skippedWarnings += 1;
      return;
    }
    this.logger.warn(
      { err: error, suppressedSinceLast: this.skippedWarnings },
      'rate limiting is off while Redis is unreachable; requests are allowed uncounted',
    );
    this.lastWarnAt = now;
    this.skippedWarnings = 0;
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
