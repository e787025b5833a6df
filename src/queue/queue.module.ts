import { BullModule } from '@nestjs/bull';
import { Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { bullConnection, queueKeyPrefix, RedisConnection } from '../common/redis/redis-connection';
import { AppConfig } from '../config/app-config';
import { RETRY_BACKOFF, retryBackoff } from '../modules/webhooks/webhook-queue';

/** Cluster clients made for Bull, which Bull does not close itself. */
const clusterClients: RedisConnection[] = [];

@Injectable()
class ClusterClientCloser implements OnApplicationShutdown {
  onApplicationShutdown(): void {
    for (const client of clusterClients.splice(0)) client.disconnect();
  }
}

@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...bullConnection(config, clusterClients),
        prefix: queueKeyPrefix(config),
        settings: {
          // A job whose worker died is picked up again once its lock expires; never give up on
          // it, because PostgreSQL decides when a webhook has failed.
          lockDuration: config.webhook.jobLockMs,
          lockRenewTime: Math.floor(config.webhook.jobLockMs / 2),
          stalledInterval: config.webhook.jobLockMs,
          maxStalledCount: 1_000_000,
          backoffStrategies: { [RETRY_BACKOFF]: retryBackoff },
        },
      }),
    }),
  ],
  providers: [ClusterClientCloser],
  exports: [BullModule],
})
export class QueueModule {}
