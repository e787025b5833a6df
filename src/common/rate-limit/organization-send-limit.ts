import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config';
import type { ApiKeyPrincipal } from '../auth/principal';
import { DomainError } from '../errors/domain-error';
import type { RedisThrottlerStorage } from './redis-throttler.storage';

const sendKey = (organizationId: string) => `webhook-sends:org:${organizationId}`;

function tooManySends(limit: number, windowMs: number, retryAfterSeconds: number, detail = ''): DomainError {
  const retryAfter = String(Math.max(1, retryAfterSeconds));
  return new DomainError(
    429,
    'RATE_LIMITED',
    `Too many webhook sends for this organization (at most ${limit} per ${Math.round(windowMs / 1000)} s)${detail}; retry in ${retryAfter} s.`,
    undefined,
    { 'retry-after': retryAfter },
  );
}

/**
 * Counts webhook sends an organization asks for by hand (test sends, redeliveries, replays) in
 * one Redis window per organization, shared by every key of the organization and every instance.
 * Each of these makes the service POST to a URL the organization chose, so without a cap an
 * admin key could turn the service into a request cannon. Runs after the route's `@Auth`.
 */
@Injectable()
export class OrganizationSendLimitGuard implements CanActivate {
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

/**
 * Charges sends beyond the one the route's guard counted, in the same window: a replay costs as
 * many sends as the webhooks it queues, not one request. All or nothing: a charge that does not
 * fit is refused (429) and uses up nothing of what is left.
 */
@Injectable()
export class OrganizationSendLimiter {
  constructor(
    @InjectThrottlerStorage() private readonly storage: ThrottlerStorage,
    private readonly config: AppConfig,
  ) {}

  async charge(organizationId: string, sends: number): Promise<void> {
    const { webhookSendsPerOrganization: limit, webhookSendsWindowMs: windowMs } = this.config.rateLimit;
    if (limit === 0 || sends <= 0) return;
    const spent = await (this.storage as RedisThrottlerStorage).spend(sendKey(organizationId), windowMs, limit, sends);
    if (!spent.allowed) throw tooManySends(limit, windowMs, spent.timeToExpire, `: this would queue ${sends + 1}`);
  }
}

/**
 * Caps a route that sends webhooks on demand at WEBHOOK_SENDS_PER_ORGANIZATION per
 * WEBHOOK_SENDS_WINDOW for the calling organization; put it on every such route (test send,
 * redeliver, replay).
 */
export function OrganizationSendLimit() {
  return applyDecorators(
    UseGuards(OrganizationSendLimitGuard),
    ApiTooManyRequestsResponse({
      description: 'RATE_LIMITED: the organization asked for too many webhook sends in the window; see Retry-After.',
    }),
  );
}
