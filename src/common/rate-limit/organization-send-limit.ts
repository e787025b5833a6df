import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config';
import type { ApiKeyPrincipal } from '../auth/principal';
import { DomainError } from '../errors/domain-error';
import type { RedisThrottlerStorage } from './redis-throttler.storage';

const sendKey = (organizationId: string) => `webhook-sends:org:${organizationId}`;

function tooManySends(limit: number, windowMs: number, retryAfterSeconds: number): DomainError {
  const retryAfter = String(Math.max(1, retryAfterSeconds));
  return new DomainError(
    429,
    'RATE_LIMITED',
    `Too many webhook sends for this organization (at most ${limit} per ${Math.round(windowMs / 1000)} s); retry in ${retryAfter} s.`,
    undefined,
    { 'retry-after': retryAfter },
  );
}

/**
 * Counts webhook sends an organization asks for by hand (test sends, redeliveries) in one Redis
 * window per organization, shared by every key of the organization and every instance. Each of
 * these makes the service POST to a URL the organization chose, so without a cap an admin key
 * could turn the service into a request cannon. Runs after the route's `@Auth`. Replays have a
 * budget of their own (OrganizationReplayBudget).
 */
@Injectable()
class OrganizationSendLimitGuard implements CanActivate {
  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { webhookSendsPerOrganization: limit, webhookSendsWindowMs: windowMs } = this.config.rateLimit;
    if (limit === 0) return true;
    const principal = context.switchToHttp().getRequest<{ user?: ApiKeyPrincipal }>().user;
    if (!principal) return true; // @Auth has already refused the request
    const record = await this.storage.increment(sendKey(principal.organizationId), windowMs, limit, windowMs, 'webhook-sends');
    if (!record.isBlocked) return true;
    throw tooManySends(limit, windowMs, record.timeToBlockExpire);
  }
}

const replayKey = (organizationId: string) => `webhook-replays:org:${organizationId}`;
const HOUR_MS = 3_600_000;

/**
 * Replays' own budget: the webhooks an organization's replays may queue per hour
 * (WEBHOOK_REPLAYS_PER_HOUR), counted in one Redis window per organization shared by every key
 * and every instance. A replay is the recovery path after a receiver's outage (up to 10,000
 * webhooks a call), so it is not charged to the small limit on test sends and redeliveries; this
 * budget keeps replays from being a request cannon instead. All or nothing: a replay that does
 * not fit in what is left of the hour is refused (429 with Retry-After) and uses up nothing.
 */
@Injectable()
export class OrganizationReplayBudget {
  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    private readonly config: AppConfig,
  ) {}

  async charge(organizationId: string, webhooks: number): Promise<void> {
    const limit = this.config.rateLimit.webhookReplaysPerHour;
    if (limit === 0 || webhooks <= 0) return;
    const spent = await (this.storage as RedisThrottlerStorage).spend(replayKey(organizationId), HOUR_MS, limit, webhooks);
    if (spent.allowed) return;
    const retryAfter = String(Math.max(1, spent.timeToExpire));
    const advice = webhooks > limit ? 'narrow the time window or the filters' : `retry in ${retryAfter} s`;
    throw new DomainError(
      429,
      'RATE_LIMITED',
      `Replays may queue at most ${limit} webhooks per hour for this organization; this replay would queue ${webhooks}, more than is left; ${advice}.`,
      undefined,
      { 'retry-after': retryAfter },
    );
  }
}

/**
 * Caps a route that sends webhooks on demand at WEBHOOK_SENDS_PER_ORGANIZATION per
 * WEBHOOK_SENDS_WINDOW for the calling organization; put it on every such route (test send,
 * redeliver), not on replay (OrganizationReplayBudget).
 */
export function OrganizationSendLimit() {
  return applyDecorators(
    UseGuards(OrganizationSendLimitGuard),
    ApiTooManyRequestsResponse({
      description: 'RATE_LIMITED: the organization asked for too many webhook sends in the window; see Retry-After.',
    }),
  );
}
