import { EntityManager } from '@mikro-orm/postgresql';
import { Controller, Get, Header, Inject, OnModuleDestroy } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { PublicRoute } from '../../common/auth/access';
import { DomainError } from '../../common/errors/domain-error';
import { metricsRegistry } from './metrics';

export const HEALTH_REDIS = Symbol('HEALTH_REDIS');
const CHECK_TIMEOUT_MS = 1500;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });
}

class HealthDto {
  status: 'ok';
  checks?: Record<string, 'up'>;
}

@ApiTags('Operations')
@PublicRoute()
// Probes and scrapes must keep working whatever the traffic, and while Redis is down.
@SkipThrottle()
@Controller()
export class HealthController implements OnModuleDestroy {
  constructor(
    private readonly em: EntityManager,
    @Inject(HEALTH_REDIS) private readonly redis: Redis,
  ) {}

  @Get('health/live')
  @ApiOkResponse({ type: HealthDto, description: 'The process is up.' })
  live(): HealthDto {
    return { status: 'ok' };
  }

  @Get('health/ready')
  @ApiOkResponse({ type: HealthDto, description: 'PostgreSQL and Redis are reachable.' })
  @ApiServiceUnavailableResponse({ description: 'PostgreSQL or Redis is unreachable (problem details).' })
  async ready(): Promise<HealthDto> {
    const [database, redis] = await Promise.allSettled([
      withTimeout(this.em.getConnection().execute('select 1'), CHECK_TIMEOUT_MS),
      withTimeout(this.pingRedis(), CHECK_TIMEOUT_MS),
    ]);
    const down = [database.status === 'rejected' ? 'database' : null, redis.status === 'rejected' ? 'redis' : null].filter(
      (name): name is string => name !== null,
    );
    if (down.length > 0) {
      throw new DomainError(503, 'NOT_READY', `Unreachable: ${down.join(', ')}.`, undefined, { 'retry-after': '5' });
    }
    return { status: 'ok', checks: { database: 'up', redis: 'up' } };
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiExcludeEndpoint()
  metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }

  private async pingRedis(): Promise<void> {
    if (this.redis.status === 'wait' || this.redis.status === 'end') await this.redis.connect();
    await this.redis.ping();
  }

  async onModuleDestroy(): Promise<void> {
    this.redis.disconnect();
  }
}
