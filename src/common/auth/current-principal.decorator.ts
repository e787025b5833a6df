import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { ApiKeyPrincipal } from './principal';

/** The authenticated API key of the request (use only behind `@Auth`). */
export const CurrentKey = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): ApiKeyPrincipal => ctx.switchToHttp().getRequest<{ user: ApiKeyPrincipal }>().user,
);

/** What the audit log records about a request: who, from where, under which request id. */
export interface RequestMeta {
  requestId: string | null;
  ip: string | null;
}

export const ReqMeta = createParamDecorator((_: unknown, ctx: ExecutionContext): RequestMeta => {
  // The request-id middleware sets `id`; Express derives `ip` (through trusted proxies only).
  const req = ctx.switchToHttp().getRequest<{ id?: string; ip?: string }>();
  return { requestId: req.id ?? null, ip: req.ip ?? null };
});
