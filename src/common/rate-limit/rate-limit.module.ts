import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config';
import { OrganizationsModule } from '../../modules/organizations/organizations.module';
import { OrganizationsService } from '../../modules/organizations/organizations.service';
import { ApiKeyLookup } from './api-key-lookup';
import { RateLimitGuard } from './rate-limit.guard';
import { RedisThrottlerStorage } from './redis-throttler.storage';

@Module({ providers: [RedisThrottlerStorage], exports: [RedisThrottlerStorage] })
class RateLimitStorageModule {}

/** Rate limits on every route except those marked @SkipThrottle() (health probes, metrics). */
@Module({
  imports: [
    OrganizationsModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [AppConfig, RedisThrottlerStorage],
      // The guard chooses the limit per caller; this entry carries the window.
      useFactory: (config: AppConfig, storage: RedisThrottlerStorage) => ({
        throttlers: [{ ttl: config.rateLimit.windowMs, limit: config.rateLimit.perKey }],
        storage,
      }),
    }),
  ],
  providers: [
    { provide: ApiKeyLookup, useExisting: OrganizationsService },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
})
export class RateLimitModule {}
