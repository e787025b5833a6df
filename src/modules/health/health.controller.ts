import { withTimeout } from '../../common/async/with-timeout';
import { Controller, Get, Header, Inject, OnModuleDestroy, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheckResult, HealthCheckService, HealthIndicatorService, MikroOrmHealthIndicator } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { MetricsAuth, PublicRoute } from '../../common/auth/access';
import { DomainError } from '../../common/errors/domain-error';
import { METRICS_CONTENT_TYPE, MetricsText } from './metrics-text';

export const HEALTH_REDIS = Symbol('HEALTH_REDIS');
const CHECK_TIMEOUT_MS = 1500;

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
    private readonly health: HealthCheckService,
    private readonly database: MikroOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    @Inject(HEALTH_REDIS) private readonly redis: Redis,
    private readonly metricsText: MetricsText,
  ) {}

  @Get('health/live')
  @ApiOperation({ operationId: 'getLiveness', summary: 'Liveness probe: the process is up', description: 'Public: no API key.' })
  @ApiOkResponse({ type: HealthDto, description: 'The process is up.' })
  live(): HealthDto {
    return { status: 'ok' };
  }

  @Get('health/ready')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness probe: PostgreSQL and Redis are reachable',
    description: 'Public: no API key.',
  })
  @ApiOkResponse({ type: HealthDto, description: 'PostgreSQL and Redis are reachable.' })
  @ApiServiceUnavailableResponse({ description: 'NOT_READY: PostgreSQL or Redis is unreachable.' })
  async ready(): Promise<HealthDto> {
    try {
      await this.health.check([() => this.database.pingCheck('database', { timeout: CHECK_TIMEOUT_MS }), () => this.redisCheck('redis')]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      // Terminus's own 503 body is not problem details: answer in the contract's shape.
      const down = Object.keys((error.getResponse() as HealthCheckResult).error ?? {});
      throw new DomainError(503, 'NOT_READY', `Unreachable: ${down.join(', ')}.`, undefined, { 'retry-after': '5' });
    }
    return { status: 'ok', checks: { database: 'up', redis: 'up' } };
  }

  @Get('metrics')
  @MetricsAuth()
  @Header('content-type', METRICS_CONTENT_TYPE)
  @ApiExcludeEndpoint()
  metrics(): Promise<string> {
    return this.metricsText.get();
  }

  private async redisCheck(key: 'redis') {
    const indicator = this.indicators.check(key);
    try {
      await withTimeout(this.pingRedis(), CHECK_TIMEOUT_MS);
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error) });
    }
  }

  private async pingRedis(): Promise<void> {
    if (this.redis.status === 'wait' || this.redis.status === 'end') await this.redis.connect();
    await this.redis.ping();
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
