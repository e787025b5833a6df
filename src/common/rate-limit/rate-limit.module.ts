import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config';
import { ApiKeyLookup } from './api-key-lookup';
import { RateLimitGuard } from './rate-limit.guard';
import { RedisThrottlerStorage } from './redis-throttler.storage';

@Module({ providers: [RedisThrottlerStorage], exports: [RedisThrottlerStorage] })
class RateLimitStorageModule {}

/**
 * Rate limits on every route except those marked @SkipThrottle() (health probes, metrics). The
 * module that owns API keys provides the lookup (`keys`): rate limiting sits below it and must not
 * import it.
 */
@Module({})
export class RateLimitModule {
  static forRoot(keys: { imports: (Type | DynamicModule)[]; lookup: Type<ApiKeyLookup> }): DynamicModule {
    return {
      module: RateLimitModule,
      imports: [
        ...keys.imports,
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
        { provide: ApiKeyLookup, useExisting: keys.lookup },
        { provide: APP_GUARD, useClass: RateLimitGuard },
      ],
    };
  }
}
