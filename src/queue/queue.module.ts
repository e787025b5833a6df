import { BullModule } from '@nestjs/bull';
import { Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { bullConnection, queueKeyPrefix, RedisConnection } from '../common/redis/redis-connection';
import { AppConfig } from '../config/app-config';

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
        // Each queue's own settings (locks, backoff) belong to the module that owns the queue.
      }),
    }),
  ],
  providers: [ClusterClientCloser],
  exports: [BullModule],
})
export class QueueModule {}
