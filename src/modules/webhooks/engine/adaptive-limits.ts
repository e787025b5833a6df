import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { createRedisConnection, RedisConnection } from '../../../common/redis/redis-connection';
import type { AppConfig } from '../../../config/app-config';
import { afterAnswer, AnswersSeen, JudgedAnswer, LimitAtStart, NOTHING_SEEN, startLimit } from './adaptive-limit.rules';
import { appliedChanges, callFor, NO_CHANGES, PendingChanges, SharedLimit, withChange } from './in-flight-grant.rules';
import { GRANT_SCRIPT } from './in-flight-grant.script';
import { endpointInFlightLimit } from './webhook-metrics';

/** An endpoint's limit starts over after this long without a grant call. */
const LIMIT_IDLE_MS = 3_600_000;
/** How long a grant may be used to admit attempts after the call that gave it, without another answer from Redis. */
const FRESH_MS = 2000;
/** A grant in use is renewed this often (within FRESH_MS even when a call fails or two). */
const RENEW_MS = 500;
/**
 * A grant this worker fills is renewed this often: other workers may be waiting for places, and
 * they learn nothing until it renews (the first worker of a burst takes the whole limit).
 */
const FULL_RENEW_MS = 100;
/** Soon: a grant to shrink (held over its target while others wait), or asked again after getting less than it wanted. */
const SOON_MS = 50;
const TICK_MS = 50;
/** A grant nothing asked for, with nothing in flight, for this long is forgotten. */
const GRANT_IDLE_MS = 3000;
/** Endpoints whose latency a worker remembers; the least recently used is forgotten first. */
const ENDPOINTS_REMEMBERED = 10_000;
const COMMAND_TIMEOUT_MS = 1000;
const WARN_EVERY_MS = 10_000;

/** An attempt's place under its endpoint's limit on this worker, and the limit as it started. */
export interface InFlightPlace {
  endpointId: string;
  /** Under the endpoint's shared, adaptive limit (it sets maxInFlight); else under the worker's fixed one. */
  shared: boolean;
  maxInFlight: number;
  atStart: LimitAtStart;
  /** When it started, on Redis's clock as this worker reckons it. */
  startedAt: number;
}

/** This worker's share of one endpoint's limit, and what it knows of the limit. */
interface Grant {
  endpointId: string;
  max: number;
  /** The places this worker may fill, as its last grant call gave. */
  target: number;
  /** The places Redis records for it: at least `target`, and at least what it had in flight. */
  hold: number;
  /** The shared limit as the last call answered, with this worker's changes since applied. */
  known: SharedLimit;
  pending: PendingChanges;
  /** What the other workers hold, as the last call found. */
  othersHeld: number;
  /**
   * Attempts the batches asked for in this window of RENEW_MS and the one before: with what is in
   * flight, what the worker wants (a rate, so a steady flow keeps its grant between calls).
   */
  demand: number;
  previousDemand: number;
  windowStartedAt: number;
  /** Admission uses the grant until then (this worker's clock); a grant not yet answered has 0. */
  freshUntil: number;
  /** The others want this many places more than they hold, as the last call found. */
  othersShort: number;
  /** The target of the last call made while batches asked for the endpoint: what an idle worker still wants for a moment. */
  lastTarget: number;
  sentAt: number;
  /** The last call gave less than it asked: ask again only after SOON_MS. */
  short: boolean;
  /** Redis records a grant or a want of this worker. */
  recorded: boolean;
  calling: Promise<void> | null;
  /** While a call is out: the places it said this worker fills, which the answer's hold covers. */
  sentHeld: number;
  lastAskedAt: number;
}

type GrantReply = [number, number, number, number, number, number, number, number];

/**
 * Each endpoint's adaptive in-flight limit, shared by the workers through grants in Redis. A
 * worker asks for a grant for the endpoints of a batch before planning it, at most one round trip
 * per batch (one script per endpoint, pipelined) and none while its grants are fresh and have
 * room; admission, slots and answers are then local. Grants in use are renewed on a timer, which
 * also carries the grows the answers gathered; a cut is applied here at once and sent at once.
 * Each endpoint's two keys carry its id as their one hash tag, so a Redis Cluster keeps them on one
 * node. Fails closed, as the rate limit does: once a grant cannot be renewed for FRESH_MS, no
 * attempt is admitted to its endpoint (its webhooks are looked at again shortly), since
 * maxInFlight is a promise to the receiver; the queues live in the same Redis anyway.
 */
export class AdaptiveLimits {
  private readonly logger = new Logger('EndpointInFlightLimit');
  private readonly redis: RedisConnection;
  private readonly prefix: string;
  private readonly worker = randomUUID();
  private readonly grants = new Map<string, Grant>();
  private readonly seen = new LRUCache<string, { seen: AnswersSeen }>({ max: ENDPOINTS_REMEMBERED });
  /** Redis's clock minus this worker's, as the last answer showed. */
  private offsetMs = 0;
  private closing = false;
  private lastWarnAt = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    config: Pick<AppConfig, 'redisUrl' | 'redisClusterNodes' | 'queuePrefix'>,
    private readonly serviceDefault: number,
    /** An attempt's claim lease: a grant outlives any attempt admitted under it by that much. */
    private readonly leaseMs: number,
    /** This worker's attempts in flight to an endpoint (slots taken). */
    private readonly inFlight: (endpointId: string) => number,
  ) {
    // The offline queue holds the first calls while the connection opens.
    this.redis = createRedisConnection(config, 'endpoint-in-flight', {
      commandTimeout: COMMAND_TIMEOUT_MS,
      enableAutoPipelining: true,
      enableOfflineQueue: true,
    });
    this.redis.defineCommand('inFlightGrant', { numberOfKeys: 2, lua: GRANT_SCRIPT });
    this.redis.on('error', () => undefined);
    this.prefix = `${config.queuePrefix}:endpoint-in-flight:`;
    this.timer = setInterval(() => this.renew(), TICK_MS);
    this.timer.unref();
  }

  /** The endpoint's maxInFlight: its own, or the service's default when it sets none. */
  maxOf(maxInFlight: number | null): number {
    return maxInFlight ?? this.serviceDefault;
  }

  /**
   * Makes sure each endpoint a batch is about to plan has a fresh grant with room for its
   * attempts (`attempts`: how many the batch may ask admission for): one script per endpoint that
   * needs one, sent together. Resolves at once when every grant is fresh and has room.
   */
  async prepare(
    demand: ReadonlyMap<string, { maxInFlight: number | null; attempts: number }>,
    admitted: (endpointId: string) => number,
  ): Promise<void> {
    const now = Date.now();
    let calls: Promise<void>[] | null = null;
    for (const [endpointId, { maxInFlight, attempts }] of demand) {
      const grant = this.grantOf(endpointId, maxInFlight);
      this.roll(grant, now);
      grant.demand += attempts;
      grant.lastAskedAt = now;
      const wanted = attempts + admitted(endpointId);
      if (now >= grant.freshUntil || this.wantsMore(grant, wanted, now)) (calls ??= []).push(this.ask(grant, wanted));
    }
    if (calls) await Promise.all(calls);
  }

  /**
   * A grant call for a batch: after the one already out, if any (its answer may be enough, and
   * while it is out the grant's room is what that call said this worker fills).
   */
  private async ask(grant: Grant, wanted: number): Promise<void> {
    if (grant.calling) {
      await grant.calling;
      if (Date.now() < grant.freshUntil && !this.wantsMore(grant, wanted, Date.now())) return;
    }
    await this.call(grant);
  }

  /** How many attempts may be admitted to the endpoint now (in flight and admitted included): 0 without a fresh grant. */
  admissionLimit(endpointId: string): number {
    const grant = this.grants.get(endpointId);
    return grant && Date.now() < grant.freshUntil ? this.usable(grant) : 0;
  }

  /** How many of this worker's attempts may be in flight to the endpoint now. */
  slotLimit(endpointId: string): number {
    const grant = this.grants.get(endpointId);
    return grant ? this.usable(grant) : 0;
  }

  /** Whether this worker holds a grant of the endpoint's limit (the endpoint sets maxInFlight, and a batch asked for it). */
  shares(endpointId: string): boolean {
    return this.grants.has(endpointId);
  }

  /**
   * The endpoint no longer sets maxInFlight: this worker forgets its grant at once (what Redis
   * records of it lapses with the grant's expiry), and the endpoint is back under the fixed limit.
   */
  drop(endpointId: string): void {
    this.grants.delete(endpointId);
  }

  /** An attempt took one of the endpoint's slots: the limit it starts under. Null when the worker has no grant on it. */
  started(endpointId: string): InFlightPlace | null {
    const grant = this.grants.get(endpointId);
    if (!grant) return null;
    return {
      endpointId,
      shared: true,
      maxInFlight: grant.max,
      startedAt: Date.now() + this.offsetMs,
      atStart: {
        limit: grant.known.limit,
        threshold: grant.known.threshold,
        inFlight: this.inFlight(endpointId) + grant.othersHeld,
        floor: startLimit(grant.max, this.serviceDefault),
      },
    };
  }

  /**
   * An answer (a request that reached the endpoint) judged by the rules: a grow is gathered for
   * the next call, a cut lowers the limit this worker uses at once and is sent at once.
   */
  answered(place: InFlightPlace, answer: JudgedAnswer): void {
    let remembered = this.seen.get(place.endpointId);
    if (!remembered) this.seen.set(place.endpointId, (remembered = { seen: NOTHING_SEEN }));
    const next = afterAnswer(remembered.seen, answer, place.atStart);
    remembered.seen = next.seen;
    const grant = this.grants.get(place.endpointId);
    if (next.change.kind === 'none' || !grant) return;
    const changed = withChange(grant.known, grant.pending, next.change, place.startedAt, Date.now() + this.offsetMs, grant.max);
    grant.known = changed.known;
    grant.pending = changed.pending;
    if (!changed.cut) return;
    endpointInFlightLimit.set({ endpoint_id: place.endpointId }, grant.known.limit);
    // A call out now carried none of it: the answer to that one sends it (see learn).
    if (!grant.calling && !this.closing) void this.call(grant);
  }

  /**
   * An attempt to the endpoint ended (its slot is free). A grant held over its target while other
   * workers wait is given back as soon as the attempts are down to the target, not at the next
   * renewal: the other workers get their places that much sooner.
   */
  ended(endpointId: string): void {
    const grant = this.grants.get(endpointId);
    if (!grant || grant.calling || this.closing || grant.hold <= grant.target || grant.othersShort === 0) return;
    if (this.inFlight(endpointId) <= this.usable(grant)) void this.call(grant);
  }

  /** The keys of an endpoint's grants and limit; their one hash tag is the endpoint id. */
  grantsKey(endpointId: string): string {
    return `${this.prefix}grants:{${endpointId}}`;
  }

  limitKey(endpointId: string): string {
    return `${this.prefix}limit:{${endpointId}}`;
  }

  /** Gives back what this worker holds beyond its attempts still in flight (best effort, within a second), then disconnects. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.closing = true;
    const calls = [...this.grants.values()]
      .filter((g) => g.recorded || g.calling !== null)
      .map((g) => this.settled(g).then(() => this.call(g)));
    await Promise.race([
      Promise.allSettled(calls),
      new Promise<void>((resolve) => {
        setTimeout(resolve, COMMAND_TIMEOUT_MS).unref();
      }),
    ]);
    this.redis.disconnect();
  }

  private grantOf(endpointId: string, maxInFlight: number | null): Grant {
    const max = this.maxOf(maxInFlight);
    let grant = this.grants.get(endpointId);
    if (!grant) {
      const start = startLimit(max, this.serviceDefault);
      grant = {
        endpointId,
        max,
        target: 0,
        hold: 0,
        known: { limit: start, threshold: max, lastCutAt: 0 },
        pending: NO_CHANGES,
        othersHeld: 0,
        demand: 0,
        previousDemand: 0,
        windowStartedAt: Date.now(),
        freshUntil: 0,
        othersShort: 0,
        lastTarget: 0,
        sentAt: 0,
        short: false,
        recorded: false,
        calling: null,
        sentHeld: 0,
        lastAskedAt: 0,
      };
      this.grants.set(endpointId, grant);
    }
    if (grant.max !== max) {
      // maxInFlight changed: the limit known is kept within it, and the grant is asked for anew.
      grant.max = max;
      grant.known = appliedChanges(grant.known, NO_CHANGES, 0, max);
      grant.freshUntil = 0;
    }
    return grant;
  }

  /** The places this worker may fill: its target, the limit it knows (a cut applies at once), and while a call is out what that call said it fills. */
  private usable(grant: Grant): number {
    const usable = Math.min(grant.target, grant.known.limit);
    return grant.calling ? Math.min(usable, grant.sentHeld) : usable;
  }

  /** A batch wants more than the grant has room for, and asking may give more (the limit it knows is above the target). */
  private wantsMore(grant: Grant, wanted: number, now: number): boolean {
    if (this.inFlight(grant.endpointId) + wanted <= this.usable(grant)) return false;
    if (grant.target >= Math.min(grant.known.limit, grant.max)) return false;
    return !grant.short || now - grant.sentAt >= SOON_MS;
  }

  /** One grant call for the endpoint (the one already out, if any): renews or shrinks the grant and carries the gathered changes. */
  private call(grant: Grant): Promise<void> {
    if (grant.calling) return grant.calling;
    const inFlight = this.inFlight(grant.endpointId);
    const asked = grant.demand + grant.previousDemand;
    const { held, want, ask } = callFor({
      hold: grant.hold,
      inFlight,
      usable: this.usable(grant),
      asked,
      lastTarget: grant.lastTarget,
      recentlyUsed: Date.now() - grant.lastAskedAt < GRANT_IDLE_MS,
      stopping: this.closing,
      maxInFlight: grant.max,
    });
    const pending = grant.pending;
    const sentAt = Date.now();
    grant.pending = NO_CHANGES;
    grant.sentAt = sentAt;
    grant.sentHeld = held;
    const cut = pending.cut;
    const reply = (this.redis as unknown as { inFlightGrant(...args: (string | number)[]): Promise<GrantReply> }).inFlightGrant(
      this.grantsKey(grant.endpointId),
      this.limitKey(grant.endpointId),
      this.worker,
      grant.max,
      startLimit(grant.max, this.serviceDefault),
      held,
      want,
      FRESH_MS + this.leaseMs,
      pending.grow,
      cut ? cut.to : 0,
      cut ? cut.startedAt : 0,
      LIMIT_IDLE_MS,
      ask,
    );
    grant.calling = reply.then(
      (answer) => {
        grant.calling = null;
        this.learn(grant, answer, sentAt, { ask, want, inUse: asked > 0 });
      },
      (error: unknown) => {
        grant.calling = null;
        // Whether the script ran is unknown: only what both cases record is used, and the cut is sent again.
        grant.target = Math.min(grant.target, held);
        grant.hold = held;
        if (cut) grant.pending = { ...grant.pending, cut: grant.pending.cut ?? cut };
        this.warn(error);
      },
    );
    return grant.calling;
  }

  private learn(
    grant: Grant,
    [target, hold, limit, threshold, lastCutAt, othersHeld, othersShort, now]: GrantReply,
    sentAt: number,
    sent: { ask: number; want: number; inUse: boolean },
  ): void {
    this.offsetMs = now - Date.now();
    grant.target = target;
    grant.hold = hold;
    grant.othersHeld = othersHeld;
    grant.short = target < sent.ask;
    // Redis keeps a record while it holds places or wants some (an idle worker's want included).
    grant.recorded = hold > 0 || sent.want > 0;
    if (sent.inUse) grant.lastTarget = target;
    grant.freshUntil = sentAt + FRESH_MS;
    grant.known = appliedChanges({ limit, threshold, lastCutAt }, grant.pending, now, grant.max);
    grant.othersShort = othersShort;
    endpointInFlightLimit.set({ endpoint_id: grant.endpointId }, grant.known.limit);
    // A cut that came while this call was out goes at once.
    if (grant.pending.cut && !this.closing) void this.call(grant);
  }

  /** The timer: renews grants in use, shrinks unused ones, forgets idle ones. */
  private renew(): void {
    const now = Date.now();
    for (const grant of this.grants.values()) {
      if (grant.calling) continue;
      this.roll(grant, now);
      const idle = this.inFlight(grant.endpointId) === 0 && grant.demand + grant.previousDemand === 0;
      const nothingToSend = idle && grant.pending.grow === 0 && grant.pending.cut === null;
      if (nothingToSend && !grant.recorded) {
        if (now - grant.lastAskedAt >= GRANT_IDLE_MS) this.grants.delete(grant.endpointId);
        continue;
      }
      if (now >= grant.sentAt + this.renewalMs(grant)) void this.call(grant);
    }
  }

  /**
   * How long after its last call a grant is renewed: soon when it holds more than its target
   * while other workers wait (it shrinks as its attempts end), often while this worker fills it,
   * else every RENEW_MS.
   */
  private renewalMs(grant: Grant): number {
    if (grant.othersShort > 0 && grant.hold > grant.target) return SOON_MS;
    const usable = this.usable(grant);
    return usable > 0 && this.inFlight(grant.endpointId) >= usable ? FULL_RENEW_MS : RENEW_MS;
  }

  /** Starts a new demand window once the current one is RENEW_MS old. */
  private roll(grant: Grant, now: number): void {
    if (now - grant.windowStartedAt < RENEW_MS) return;
    grant.previousDemand = now - grant.windowStartedAt < 2 * RENEW_MS ? grant.demand : 0;
    grant.demand = 0;
    grant.windowStartedAt = now;
  }

  private settled(grant: Grant): Promise<void> {
    return grant.calling ? grant.calling.then(() => this.settled(grant)) : Promise.resolve();
  }

  private warn(error: unknown): void {
    if (Date.now() - this.lastWarnAt <= WARN_EVERY_MS) return;
    this.lastWarnAt = Date.now();
    this.logger.warn({ err: error }, 'cannot reach Redis for the endpoints’ in-flight limits; their webhooks wait for it');
  }
}
