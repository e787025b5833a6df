import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { AppConfig } from '../../config/app-config';
import { createRedisConnection } from '../../common/redis/redis-connection';
import { HEALTH_REDIS, HealthController } from './health.controller';
import { HttpMetricsInterceptor } from './http-metrics.interceptor';
import { MetricsListener, MetricsText } from './metrics-text';

@Module({
  // Readiness checks run on terminus; failures are answered (and counted) by the controller, not logged per probe.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [
    { provide: HEALTH_REDIS, inject: [AppConfig], useFactory: (config: AppConfig) => createRedisConnection(config, 'health') },
    { provide: APP_INTERCEPTOR, useClass: HttpMetricsInterceptor },
    { provide: MetricsText, useFactory: () => new MetricsText() },
    MetricsListener,
  ],
})
export class HealthModule {}
