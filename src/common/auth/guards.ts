import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../errors/domain-error';
import type { Access } from './access';
import { ACCESS_METADATA, ApiKeyPrincipal, mayCall, rolesAccepted } from './principal';

const CHALLENGE = { 'www-authenticate': 'Bearer' };

/** Name under which the organizations module registers its passport bearer strategy. */
export const API_KEY_STRATEGY = 'api-key';

@Injectable()
export class ApiKeyAuthGuard extends AuthGuard(API_KEY_STRATEGY) {
  handleRequest<T>(err: unknown, user: T, info: unknown): T {
    // The strategy's own failure (the key lookup erring) goes on unchanged to the problem-details filter.
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- whatever was raised, as it was raised
    if (err) throw err;
    if (!user) {
      // The strategy challenges with "invalid_token" only when a token was presented.
      const presented = typeof info === 'string' && info.includes('invalid_token');
      throw presented
        ? new DomainError(401, 'INVALID_API_KEY', 'The API key is unknown or has been revoked.', undefined, CHALLENGE)
        : new DomainError(401, 'UNAUTHENTICATED', 'Send an API key as "Authorization: Bearer <key>".', undefined, CHALLENGE);
    }
    return user;
  }
}

@Injectable()
export class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const access = this.reflector.getAllAndOverride<Access>(ACCESS_METADATA, [context.getHandler(), context.getClass()]);
    if (!access || access.kind !== 'apiKey') return true;
    const req = context.switchToHttp().getRequest<Request & { user?: ApiKeyPrincipal }>();
    const principal = req.user;
    if (!principal || !mayCall(principal.roles, access.role, req.method)) {
      const accepted = rolesAccepted(access.role, req.method).map((role) => `"${role}"`);
      throw new DomainError(403, 'FORBIDDEN', `This API key lacks a role this route requires (one of ${accepted.join(', ')}).`);
    }
    return true;
  }
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

@Injectable()
export class OperatorGuard implements CanActivate {
  private readonly expected: Buffer | null;

  constructor(config: AppConfig) {
    this.expected = config.operatorApiKey ? sha256(config.operatorApiKey) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) {
      throw new DomainError(404, 'OPERATOR_API_DISABLED', 'The operator API is disabled on this deployment.');
    }
    const req = context.switchToHttp().getRequest<Request & { user?: unknown }>();
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new DomainError(401, 'UNAUTHENTICATED', 'Send the operator key as "Authorization: Bearer <key>".', undefined, CHALLENGE);
    }
    // Comparing digests keeps the comparison constant-time whatever the presented length.
    if (!timingSafeEqual(sha256(match[1]), this.expected)) {
      throw new DomainError(401, 'INVALID_API_KEY', 'The operator key is not valid.', undefined, CHALLENGE);
    }
    req.user = { kind: 'operator' };
    return true;
  }
}

/** See `MetricsAuth`: the API port's /metrics under METRICS_TOKEN / METRICS_PORT. */
@Injectable()
export class MetricsGuard implements CanActivate {
  private readonly expected: Buffer | null;

  constructor(private readonly config: AppConfig) {
    this.expected = config.metrics.token ? sha256(config.metrics.token) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    // Served on its own listener only: here it is a route like any unknown one.
    if (this.config.metrics.port !== null) throw new DomainError(404, 'ROUTE_NOT_FOUND', `No route for ${req.method} ${req.path}.`);
    if (!this.expected) return true;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) {
      throw new DomainError(
        401,
        'UNAUTHENTICATED',
        'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".',
        undefined,
        CHALLENGE,
      );
    }
    if (!timingSafeEqual(sha256(match[1]), this.expected)) {
      throw new DomainError(401, 'INVALID_METRICS_TOKEN', 'The metrics token is not valid.', undefined, CHALLENGE);
    }
    return true;
  }
}
