import Redis, { RedisOptions } from 'ioredis';

/**
 * A Redis connection that fails fast instead of queueing commands while Redis is away: callers
 * (health checks, the outbox relay) decide what to do, and PostgreSQL keeps the data meanwhile.
 */
export function createRedisClient(url: string, name: string, overrides: RedisOptions = {}): Redis {
  return new Redis(url, {
    connectionName: `nft-wallet:${name}`,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    ...overrides,
  });
}
