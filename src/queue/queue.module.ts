import { BullModule } from '@nestjs/bull';
import { Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import Bull from 'bull';
import { bullConnection, queueKeyPrefix, RedisConnection } from '../common/redis/redis-connection';
import { AppConfig } from '../config/app-config';

/**
 * The cluster clients made for this application's Bull queues, which Bull does not close itself.
 * One list per application, not per process: closing one application must leave another's queues
 * (tests run several in one process) connected.
 */
@Injectable()
export class BullClusterClients implements OnApplicationShutdown {
  readonly created: RedisConnection[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.created.length === 0) return;
    // The queues close in this same phase, and nothing orders their hooks after this one. A queue
    // closing over clients already disconnected opens its blocking client again (Bull stops its
    // workers' waits for jobs by reconnecting it) and leaves it connected, its waits running on.
    // So the queues close first (closing twice is a no-op), then their clients.
    const queues = this.discovery
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is Bull.Queue => instance instanceof Bull);
    await Promise.all(queues.map((queue) => queue.close()));
    for (const client of this.created.splice(0)) client.disconnect();
  }
}

/** Where the clients list lives: BullModule's factory needs it from a module of its own. */
@Module({ imports: [DiscoveryModule], providers: [BullClusterClients], exports: [BullClusterClients] })
class BullClusterClientsModule {}

@Module({
  imports: [
    BullModule.forRootAsync({
      imports: [BullClusterClientsModule],
      inject: [AppConfig, BullClusterClients],
      useFactory: (config: AppConfig, clients: BullClusterClients) => ({
        ...bullConnection(config, clients.created),
        prefix: queueKeyPrefix(config),
        // Each queue's own settings (locks, backoff) belong to the module that owns the queue.
      }),
    }),
  ],
  exports: [BullModule],
})
export class QueueModule {}
