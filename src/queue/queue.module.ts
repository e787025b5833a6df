import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { RETRY_BACKOFF, retryBackoff } from '../modules/webhooks/webhook-queue';

@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        url: config.redisUrl,
        prefix: config.queuePrefix,
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
  exports: [BullModule],
})
export class QueueModule {}
