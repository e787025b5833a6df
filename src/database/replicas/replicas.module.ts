import { DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { AppConfig, servesApi } from '../../config/app-config';
import { ReadRoutingInterceptor } from './read-routing.interceptor';
import { RecentWrites } from './recent-writes';
import { ReplicaMonitor } from './replica-monitor.service';

/** Read replicas for the API's GET requests (docs/OPERATIONS.md "Read replicas"); nothing without DATABASE_REPLICA_URLS. */
@Module({})
export class ReplicasModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (config.replicas.urls.length === 0 || !servesApi(config)) return { module: ReplicasModule };
    return {
      module: ReplicasModule,
      providers: [ReplicaMonitor, RecentWrites, { provide: APP_INTERCEPTOR, useClass: ReadRoutingInterceptor }],
    };
  }
}
