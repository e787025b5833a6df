import { Logger } from '@nestjs/common';
import { createRedisConnection, RedisConnection } from '../../../common/redis/redis-connection';
import type { AppConfig } from '../../../config/app-config';

/**
 * One fixed one-second window per endpoint, in one hash (`w`: the window, `n`: attempts let
 * through in it). The window is read from Redis's own clock, so every worker agrees on where a
 * second starts whatever its own clock says. A slot is counted only when given, so a refusal
 * costs nothing of the next window. Returns {1 if given, ms until the next window, Redis's time in ms}.
 */
const TAKE_SCRIPT = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local window = math.floor(ms / 1000)
local stored = redis.call('HMGET', KEYS[1], 'w', 'n')
local count = 0
if tonumber(stored[1]) == window then count = tonumber(stored[2]) end
local left = 1000 - (ms % 1000)
if count >= tonumber(ARGV[1]) then return {0, left, ms} end
redis.call('HSET', KEYS[1], 'w', window, 'n', count + 1)
redis.call('PEXPIRE', KEYS[1], 2000)
return {1, left, ms}
`;

/** An attempt's place in its endpoint's window: given at `atMs`, or to ask again in `waitMs`. */
export type RatePlace = { given: true; atMs: number } | { given: false; waitMs: number };

/** Past this, Redis counts as unreachable for this attempt (which then waits for the next window). */
const COMMAND_TIMEOUT_MS = 1000;
const WARN_EVERY_MS = 10_000;

/**
 * The shared per-endpoint rate limit (an endpoint's `rateLimitPerSecond`): at most that many
 * attempts reach the endpoint in any fixed one-second window, counted in Redis so that every
 * worker process shares one count. Each endpoint's key carries its id as a hash tag, so on a
 * Redis Cluster each endpoint's count lives on one node and the endpoints spread over all of them.
 *
 * Fails closed: while Redis cannot be asked, a limited endpoint's attempts wait (a limit is a
 * promise to the receiver), and nothing else is held up.
 */
export class EndpointRateLimiter {
  private readonly logger = new Logger('EndpointRateLimit');
  private readonly redis: RedisConnection;
  private readonly prefix: string;
  private lastWarnAt = 0;

  constructor(config: Pick<AppConfig, 'redisUrl' | 'redisClusterNodes' | 'queuePrefix'>) {
    this.redis = createRedisConnection(config, 'endpoint-rate', { commandTimeout: COMMAND_TIMEOUT_MS });
    this.redis.defineCommand('endpointRateTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.redis.on('error', () => undefined);
    // Not the queues' `{prefix}` hash tag: the endpoint id must be the key's only hash tag.
    this.prefix = `${config.queuePrefix}:endpoint-rate:`;
  }

  /** The key of an endpoint's window count; its hash tag is the endpoint id. */
  keyOf(endpointId: string): string {
    return `${this.prefix}{${endpointId}}`;
  }

  /**
   * Takes one attempt's place in the endpoint's current one-second window: when given, the time
   * it was given (Redis's clock); otherwise how long until the next window starts (when it is
   * worth asking again).
   */
  async take(endpointId: string, limitPerSecond: number): Promise<RatePlace> {
    try {
      if (this.redis.status === 'wait') await this.redis.connect();
      const [given, leftMs, atMs] = await (
        this.redis as unknown as { endpointRateTake(key: string, limit: number): Promise<[number, number, number]> }
      ).endpointRateTake(this.keyOf(endpointId), limitPerSecond);
      return given === 1 ? { given: true, atMs } : { given: false, waitMs: Math.max(1, leftMs) };
    } catch (error) {
      if (Date.now() - this.lastWarnAt > WARN_EVERY_MS) {
        this.lastWarnAt = Date.now();
        this.logger.warn({ err: error }, 'cannot reach Redis for the endpoints’ rate limits; rate-limited endpoints wait');
      }
      return { given: false, waitMs: 1000 };
    }
  }

  close(): void {
    this.redis.disconnect();
  }
}

/**
 * When an attempt refused by its endpoint's rate limit looks again: at the start of the next
 * window, spread over its first `spreadMs` so that the waiting webhooks of one endpoint do not
 * all come back in the same millisecond.
 */
export function rateLimitedDelayMs(untilNextWindowMs: number, random: () => number = Math.random, spreadMs = 50): number {
  return untilNextWindowMs + Math.floor(random() * spreadMs);
}
