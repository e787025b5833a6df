import Redis, { Cluster, RedisOptions } from 'ioredis';
import type { AppConfig } from '../../config/app-config';

export type RedisConnection = Redis | Cluster;
type RedisSettings = Pick<AppConfig, 'redisUrl' | 'redisClusterNodes'>;

const retryStrategy = (times: number) => Math.min(times * 200, 2000);

/**
 * The one way this service connects to Redis: the single server of REDIS_URL, or the Redis
 * Cluster of REDIS_CLUSTER_NODES (a managed Redis). The connection fails fast instead of queueing
 * commands while Redis is away: callers (health checks, the outbox relay, the rate limiter)
 * decide what to do, and PostgreSQL keeps the data meanwhile.
 */
export function createRedisConnection(config: RedisSettings, name: string, overrides: RedisOptions = {}): RedisConnection {
  const options: RedisOptions = {
    connectionName: `nft-wallet:${name}`,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy,
    ...overrides,
  };
  if (config.redisClusterNodes === null) return new Redis(config.redisUrl, options);
  const { lazyConnect, enableOfflineQueue, retryStrategy: _nodeRetry, ...nodeOptions } = options;
  return new Cluster(config.redisClusterNodes, {
    lazyConnect,
    enableOfflineQueue,
    clusterRetryStrategy: overrides.retryStrategy ?? retryStrategy,
    redisOptions: nodeOptions,
  });
}

/**
 * Key prefix of the queues. On a cluster it is a hash tag (`{prefix}`), as Bull requires: every
 * key of a queue must live on one node for its scripts, so all queues of the deployment share
 * one node (docs/OPERATIONS.md, "Redis Cluster").
 */
export function queueKeyPrefix(config: Pick<AppConfig, 'queuePrefix' | 'redisClusterNodes'>): string {
  return config.redisClusterNodes === null ? config.queuePrefix : `{${config.queuePrefix}}`;
}

/**
 * Bull's connection settings: the URL of the single server, or clients made by this factory on
 * a cluster (blocking and subscriber connections must retry forever without a ready check, as
 * Bull demands). `created` collects them so that the owner can close them, which Bull does not
 * do for clients it did not create.
 *
 * A blocking client's command cut off by a closed connection fails back to Bull rather than being
 * sent again by the cluster client: Bull stops a worker by closing that connection and opening it
 * anew, and a wait sent again on the new connection would hold the worker for the whole wait,
 * once per worker slot, one after another. Bull itself asks for the next job again after an error.
 */
export function bullConnection(
  config: RedisSettings,
  created: RedisConnection[],
): { url: string } | { createClient: (type: 'client' | 'subscriber' | 'bclient') => RedisConnection } {
  if (config.redisClusterNodes === null) return { url: config.redisUrl };
  const nodes = config.redisClusterNodes;
  return {
    createClient: (type) => {
      const blocking = type !== 'client';
      const client = new Cluster(nodes, {
        enableReadyCheck: !blocking,
        clusterRetryStrategy: retryStrategy,
        redisOptions: {
          connectionName: `nft-wallet:bull-${type}`,
          connectTimeout: 2000,
          ...(blocking ? { maxRetriesPerRequest: null, enableReadyCheck: false } : {}),
        },
        ...(blocking ? { retryDelayOnFailover: 0 } : {}),
      });
      created.push(client);
      return client;
    },
  };
}
