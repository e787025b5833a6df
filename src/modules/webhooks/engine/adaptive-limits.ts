import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { createRedisConnection, RedisConnection } from '../../../common/redis/redis-connection';
import type { AppConfig } from '../../../config/app-config';
import { afterAnswer, AnswersSeen, JudgedAnswer, LimitAtStart, LimitChange, NOTHING_SEEN, startLimit } from './adaptive-limit.rules';
import { endpointInFlightLimit } from './webhook-metrics';

/**
 * Takes a lease on one of the endpoint's in-flight places. KEYS: the endpoint's leases (a sorted
 * set, scored by expiry on Redis's clock) and its limit (a hash: `l` limit, `t` threshold, `c`
 * last cut). Leases past their expiry (a worker that stopped without giving them back) are
 * dropped first, so a lost release never shrinks the endpoint for longer than a lease.
 * ARGV: lease id, maxInFlight, start limit, lease ms. Returns {given, limit, threshold, inFlight, now}.
 */
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local s = redis.call('HMGET', KEYS[2], 'l', 't')
local limit = math.max(1, math.min(max, tonumber(s[1]) or tonumber(ARGV[3])))
local threshold = math.max(1, math.min(max, tonumber(s[2]) or max))
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then return {0, limit, threshold, n, now} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return {1, limit, threshold, n + 1, now}
`;

/**
 * Gives a lease back and applies what its answer decided (appliedLimit in adaptive-limit.rules.ts,
 * the same arithmetic). ARGV: lease id, maxInFlight, start limit, change ('none'|'grow'|'cut'),
 * its amount, when the attempt started (Redis's clock), idle ms. Returns {limit, threshold}.
 */
const RELEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[1])
local s = redis.call('HMGET', KEYS[2], 'l', 't', 'c')
local limit = tonumber(s[1]) or tonumber(ARGV[3])
local threshold = tonumber(s[2]) or max
local cut = tonumber(s[3]) or 0
local kind = ARGV[4]
local amount = tonumber(ARGV[5])
if kind == 'grow' then
  limit = limit + amount
elseif kind == 'cut' and tonumber(ARGV[6]) >= cut then
  limit = math.min(limit, amount)
  limit = math.max(1, math.min(max, limit))
  threshold = limit
  cut = now
end
limit = math.max(1, math.min(max, limit))
threshold = math.max(1, math.min(max, threshold))
redis.call('HSET', KEYS[2], 'l', limit, 't', threshold, 'c', cut)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[7]))
return {limit, threshold}
`;

/** An endpoint's limit starts over after this long without an answer. */
const IDLE_MS = 3_600_000;
/** Endpoints whose latency and credit a worker remembers; the least recently used is forgotten first. */
const ENDPOINTS_REMEMBERED = 10_000;
const COMMAND_TIMEOUT_MS = 1000;
const WARN_EVERY_MS = 10_000;

/** A place among an endpoint's attempts in flight, across workers. */
export interface InFlightLease {
  endpointId: string;
  id: string;
  maxInFlight: number;
  atStart: LimitAtStart;
  /** When the place was given, on Redis's clock. */
  startedAt: number;
}

/** What came back from the receiver, as the limit judges it. */
export type LimitAnswer = JudgedAnswer;

interface Known {
  limit: number;
  /** The endpoint's answers as this worker saw them (the latency baseline and the open window). */
  seen: AnswersSeen;
}

/**
 * The adaptive in-flight limit of every endpoint, shared by the workers through Redis: a lease
 * per attempt in flight (one round trip to take it; giving it back, with what the answer says of
 * the receiver's load, is not waited for and goes out pipelined with the other commands of the
 * moment). Each endpoint's two keys carry its id as their one hash tag, so a Redis Cluster keeps
 * them on one node. Fails closed, as the rate limit does: while Redis cannot be asked, no attempt
 * gets a place (its webhook is looked at again shortly), since maxInFlight is a promise to the
 * receiver; the queues live in the same Redis anyway.
 */
export class AdaptiveLimits {
  private readonly logger = new Logger('EndpointInFlightLimit');
  private readonly redis: RedisConnection;
  private readonly prefix: string;
  private readonly worker = randomUUID();
  private leases = 0;
  private readonly known = new LRUCache<string, Known>({ max: ENDPOINTS_REMEMBERED });
  private lastWarnAt = 0;

  constructor(
    config: Pick<AppConfig, 'redisUrl' | 'redisClusterNodes' | 'queuePrefix'>,
    private readonly serviceDefault: number,
    private readonly leaseMs: number,
  ) {
    // The offline queue holds the first commands while the connection opens: several attempts
    // start at once on a fresh worker, and without it they would all find no place.
    this.redis = createRedisConnection(config, 'endpoint-in-flight', {
      commandTimeout: COMMAND_TIMEOUT_MS,
      enableAutoPipelining: true,
      enableOfflineQueue: true,
    });
    this.redis.defineCommand('inFlightAcquire', { numberOfKeys: 2, lua: ACQUIRE_SCRIPT });
    this.redis.defineCommand('inFlightRelease', { numberOfKeys: 2, lua: RELEASE_SCRIPT });
    this.redis.on('error', () => undefined);
    this.prefix = `${config.queuePrefix}:endpoint-in-flight:`;
  }

  /** The endpoint's maxInFlight: its own, or the service's default when it sets none. */
  maxOf(maxInFlight: number | null): number {
    return maxInFlight ?? this.serviceDefault;
  }

  /** The endpoint's current limit as this worker last learned it (where it starts, before anything is known). */
  current(endpointId: string, maxInFlight: number | null): number {
    const max = this.maxOf(maxInFlight);
    return Math.max(1, Math.min(max, this.known.get(endpointId)?.limit ?? startLimit(max, this.serviceDefault)));
  }

  /** A place among the endpoint's attempts in flight across every worker, or null when they are at its limit (or Redis cannot be asked). */
  async acquire(endpointId: string, maxInFlight: number | null): Promise<InFlightLease | null> {
    const max = this.maxOf(maxInFlight);
    const start = startLimit(max, this.serviceDefault);
    this.leases += 1;
    const id = `${this.worker}:${this.leases}`;
    try {
      const [given, limit, threshold, inFlight, now] = await (
        this.redis as unknown as { inFlightAcquire(...args: (string | number)[]): Promise<number[]> }
      ).inFlightAcquire(this.leaseKey(endpointId), this.limitKey(endpointId), id, max, start, this.leaseMs);
      this.learn(endpointId, limit);
      if (given !== 1) return null;
      return { endpointId, id, maxInFlight: max, atStart: { limit, threshold, inFlight }, startedAt: now };
    } catch (error) {
      this.warn(error);
      return null;
    }
  }

  /**
   * Gives the lease back; with the answer (a request that reached the endpoint), what it says of
   * the receiver's load moves the limit. Not waited for: a failure only leaves the lease to expire.
   */
  release(lease: InFlightLease, answer?: LimitAnswer): void {
    let change: LimitChange = { kind: 'none' };
    const known = this.remembered(lease.endpointId, lease.atStart.limit);
    if (answer) {
      const next = afterAnswer(known.seen, answer, lease.atStart);
      known.seen = next.seen;
      change = next.change;
    }
    const amount = change.kind === 'grow' ? change.by : change.kind === 'cut' ? change.to : 0;
    const start = startLimit(lease.maxInFlight, this.serviceDefault);
    (this.redis as unknown as { inFlightRelease(...args: (string | number)[]): Promise<number[]> })
      .inFlightRelease(
        this.leaseKey(lease.endpointId),
        this.limitKey(lease.endpointId),
        lease.id,
        lease.maxInFlight,
        start,
        change.kind,
        amount,
        lease.startedAt,
        IDLE_MS,
      )
      .then(([limit]) => this.learn(lease.endpointId, limit))
      .catch((error: unknown) => this.warn(error));
  }

  /** The keys of an endpoint's leases and limit; their one hash tag is the endpoint id. */
  leaseKey(endpointId: string): string {
    return `${this.prefix}leases:{${endpointId}}`;
  }

  limitKey(endpointId: string): string {
    return `${this.prefix}limit:{${endpointId}}`;
  }

  close(): void {
    this.redis.disconnect();
  }

  private remembered(endpointId: string, limit: number): Known {
    let known = this.known.get(endpointId);
    if (!known) {
      known = { limit, seen: NOTHING_SEEN };
      this.known.set(endpointId, known);
    }
    return known;
  }

  /** What Redis said the limit is: kept for admission, and shown in /metrics. */
  private learn(endpointId: string, limit: number): void {
    this.remembered(endpointId, limit).limit = limit;
    endpointInFlightLimit.set({ endpoint_id: endpointId }, limit);
  }

  private warn(error: unknown): void {
    if (Date.now() - this.lastWarnAt <= WARN_EVERY_MS) return;
    this.lastWarnAt = Date.now();
    this.logger.warn({ err: error }, 'cannot reach Redis for the endpoints’ in-flight limits; webhooks wait for it');
  }
}
