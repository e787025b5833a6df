import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiNotFoundResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ApiKeyAuthGuard, MetricsGuard, OperatorGuard, RolesGuard } from './guards';
import { ACCESS_METADATA, Role } from './principal';
export type Access = { kind: 'apiKey'; role: Role } | { kind: 'operator' } | { kind: 'metrics' } | { kind: 'public' };

export const API_KEY_SCHEME = 'apiKey';
export const OPERATOR_SCHEME = 'operatorKey';

/**
 * Every route carries exactly one access decorator; the authorization matrix test reads this
 * metadata to prove no route is left unguarded. `role` is the role the route is for; which roles
 * a key may hold to call it (admin always, auditor for the GETs of admin routes) is decided by
 * `rolesAccepted`, for the guard, the OpenAPI document and docs/ACCESS.md alike.
 */
export function Auth(role: Role) {
  return applyDecorators(
    SetMetadata(ACCESS_METADATA, { kind: 'apiKey', role } satisfies Access),
    UseGuards(ApiKeyAuthGuard, RolesGuard),
    ApiBearerAuth(API_KEY_SCHEME),
    ApiUnauthorizedResponse({ description: 'Missing, unknown or revoked API key (problem details).' }),
    ApiForbiddenResponse({ description: 'The API key holds none of the roles in `x-required-roles` (problem details).' }),
  );
}

export function OperatorAuth() {
  return applyDecorators(
    SetMetadata(ACCESS_METADATA, { kind: 'operator' } satisfies Access),
    UseGuards(OperatorGuard),
    ApiBearerAuth(OPERATOR_SCHEME),
    ApiUnauthorizedResponse({ description: 'Missing or wrong operator key (problem details).' }),
    ApiNotFoundResponse({ description: 'The operator API is disabled on this deployment.' }),
  );
}

export function PublicRoute() {
  return SetMetadata(ACCESS_METADATA, { kind: 'public' } satisfies Access);
}

/**
 * The Prometheus scrape: `Authorization: Bearer <METRICS_TOKEN>` when a token is set; not served
 * here at all when METRICS_PORT gives it a listener of its own; open only in development with
 * neither (production requires one of the two).
 */
export function MetricsAuth() {
  return applyDecorators(SetMetadata(ACCESS_METADATA, { kind: 'metrics' } satisfies Access), UseGuards(MetricsGuard));
}
