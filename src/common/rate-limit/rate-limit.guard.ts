import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  ThrottlerLimitDetail,
  ThrottlerModuleOptions,
  ThrottlerRequest,
  ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../../config/app-config';
import type { Access } from '../auth/access';
import { ACCESS_METADATA } from '../auth/principal';
import { DomainError } from '../errors/domain-error';
import { ApiKeyLookup } from './api-key-lookup';

type Caller = { tracker: string; limit: number };

const sha256 = (value: string) => createHash('sha256').update(value).digest();

/**
 * Global guard, so it runs before any route's own guards and also counts requests that will be
 * refused with 401. A request with a valid API key counts against that key (every route it
 * calls, every instance); the operator's requests against the operator; everything else, a
 * missing, made-up or revoked key included, against the client IP.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private readonly operatorDigest: Buffer | null;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly config: AppConfig,
    private readonly keys: ApiKeyLookup,
  ) {
    super(options, storage, reflector);
    this.operatorDigest = config.operatorApiKey ? sha256(config.operatorApiKey) : null;
  }

  protected async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const caller = await this.identify(request.context);
    if (caller.limit === 0) return true;
    return super.handleRequest({
      ...request,
      limit: caller.limit,
      getTracker: () => caller.tracker,
      generateKey: (_context, tracker) => tracker,
    });
  }

  private async identify(context: ExecutionContext): Promise<Caller> {
    const req = context.switchToHttp().getRequest<Request>();
    const access = this.reflector.getAllAndOverride<Access | undefined>(ACCESS_METADATA, [context.getHandler(), context.getClass()]);
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    const { perKey, perIp } = this.config.rateLimit;
    if (token && access?.kind === 'apiKey') {
      // A failed lookup (database down) leaves the caller anonymous; the route's own guard then
      // answers with the real error.
      const principal = await this.keys.authenticate(token).catch(() => null);
      if (principal) return { tracker: `key:${principal.apiKeyId}`, limit: perKey };
    }
    if (token && access?.kind === 'operator' && this.operatorDigest && timingSafeEqual(sha256(token), this.operatorDigest)) {
      return { tracker: 'operator', limit: perKey };
    }
    return { tracker: `ip:${normalizeIp(req.ip ?? 'unknown', this.ipv6SubnetPrefix)}`, limit: perIp };
  }

  protected throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const retryAfter = String(Math.max(1, detail.timeToBlockExpire));
    return Promise.reject(
      new DomainError(429, 'RATE_LIMITED', `Too many requests; retry in ${retryAfter} s.`, undefined, {
        'retry-after': retryAfter,
      }),
    );
  }
}
