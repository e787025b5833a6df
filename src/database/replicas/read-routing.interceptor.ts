import { EntityManager } from '@mikro-orm/postgresql';
import { CallHandler, ExecutionContext, HttpException, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, defer, from, mergeMap, Observable, throwError } from 'rxjs';
import type { Principal } from '../../common/auth/principal';
import { isDomainError } from '../../common/errors/domain-error';
import { counter } from '../../common/metrics';
import { ReadRoute, readRoute, runWithRoute } from './read-route';
import { RecentWrites } from './recent-writes';

const READ_METHODS = new Set(['GET', 'HEAD']);

/** The key a caller's writes are remembered by: its API key, or the operator. */
function callerOf(req: Request): string | null {
  const principal = req.user as Principal | undefined;
  if (!principal) return null;
  return principal.kind === 'apiKey' ? principal.apiKeyId : 'operator';
}

function statusOf(error: unknown): number | null {
  if (isDomainError(error)) return error.status;
  if (error instanceof HttpException) return error.getStatus();
  return null;
}

/**
 * Why a read that went to a replica is read again from the primary: a 404 (the row may not have
 * reached the replica yet) or a failure that is not the client's (the replica stopped, refused,
 * or cancelled the statement for a conflict with recovery). Null: the answer stands.
 */
export function retryReason(error: unknown): 'not_found' | 'failure' | null {
  const status = statusOf(error);
  if (status === 404) return 'not_found';
  return status === null || status >= 500 ? 'failure' : null;
}

/**
 * Sends the GET requests of authenticated callers to a read replica, except right after a write
 * of the same caller; remembers those writes. Probes, metrics and the portal carry no caller and
 * stay on the primary, so readiness never depends on a replica.
 */
@Injectable()
export class ReadRoutingInterceptor implements NestInterceptor {
  private readonly retries = counter('db_replica_read_retries_total', 'Reads answered again from the primary after a replica', ['reason']);

  constructor(
    private readonly recentWrites: RecentWrites,
    private readonly em: EntityManager,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    const caller = callerOf(req);
    if (caller === null) return next.handle();
    if (!READ_METHODS.has(req.method)) return this.write(caller, next);
    return defer(() => this.recentWrites.wroteRecently(caller)).pipe(mergeMap((recent) => this.read(readRoute(recent), next)));
  }

  /** Marked once the write is done, answered or failed, before the client can read. */
  private write(caller: string, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      mergeMap((value: unknown) => from(this.recentWrites.mark(caller).then(() => value))),
      catchError((error: unknown) => from(this.recentWrites.mark(caller)).pipe(mergeMap(() => throwError(() => error)))),
    );
  }

  private read(route: ReadRoute, next: CallHandler): Observable<unknown> {
    return this.under(route, next).pipe(
      catchError((error: unknown) => {
        const reason = route.usedReplica ? retryReason(error) : null;
        if (reason === null) return throwError(() => error);
        this.retries.inc({ reason });
        // Entities the replica loaded must not stand in for the primary's rows.
        this.em.clear();
        return this.under(readRoute(true), next);
      }),
    );
  }

  /** The handler, with every statement it makes routed by `route`. */
  private under(route: ReadRoute, next: CallHandler): Observable<unknown> {
    return new Observable((subscriber) => runWithRoute(route, () => next.handle().subscribe(subscriber)));
  }
}
