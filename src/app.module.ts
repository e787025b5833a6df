import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig, runsWorker } from './config/app-config';
import { AppConfigModule } from './config/config.module';
import { ProblemDetailsFilter } from './common/errors/problem-details.filter';
import { RateLimitModule } from './common/rate-limit/rate-limit.module';
import { DatabaseModule } from './database/database.module';
import { serviceBounds } from './database/mikro-orm.options';
import { ReplicasModule } from './database/replicas/replicas.module';
import { INSTALLED_EXTENSIONS } from './extensions/installed';
import { loggerParams } from './logging';
import { AuditModule } from './modules/audit/audit.module';
import { ChainModule } from './modules/chain/chain.module';
import { ContractIndexModule } from './modules/contract-index/contract-index.module';
import { DomainEventsModule } from './modules/domain-events/domain-events.module';
import { EventTypesModule } from './modules/event-types/event-types.module';
import { HealthModule } from './modules/health/health.module';
import { MediaModule } from './modules/media/media.module';
import { OrganizationsModule } from './modules/organizations/organizations.module';
import { OrganizationsService } from './modules/organizations/organizations.service';
import { PortalModule } from './modules/portal/portal.module';
import { SpamModule } from './modules/spam/spam.module';
import { TokensService } from './modules/tokens/tokens.service';
import { TokensModule } from './modules/tokens/tokens.module';
import { TransactionsModule } from './modules/transactions/transactions.module';
import { WalletsModule } from './modules/wallets/wallets.module';
import { WebhookEndpointsModule } from './modules/webhook-endpoints/webhook-endpoints.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';
import { WhitelistModule } from './modules/whitelist/whitelist.module';
import { ormModel } from './orm-model';
import { QueueModule } from './queue/queue.module';

export interface AppModuleOptions {
  /** Where log lines go (stdout when absent); tests capture them to prove secrets never appear. */
  logDestination?: NodeJS.WritableStream;
  /** Extension modules to run besides src/extensions/installed.ts (docs/EXTENDING.md). */
  extensions?: (Type | DynamicModule)[];
}

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, options: AppModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config),
        LoggerModule.forRoot(loggerParams(config, options.logDestination)),
        DatabaseModule.forRoot({ model: ormModel, bounds: serviceBounds }),
        ReplicasModule.forRoot(config),
        QueueModule,
        HealthModule,
        AuditModule,
        OrganizationsModule,
        DomainEventsModule,
        WalletsModule,
        MediaModule,
        TokensModule,
        TransactionsModule,
        // Delivery runs in worker processes; an indexer only follows chains.
        WebhooksModule.register({ worker: runsWorker(config) }),
        WhitelistModule,
        WebhookEndpointsModule,
        EventTypesModule,
        RateLimitModule.forRoot({ imports: [OrganizationsModule], lookup: OrganizationsService }),
        PortalModule,
        ChainModule,
        SpamModule.forRoot({ imports: [TokensModule], tokens: TokensService }),
        ContractIndexModule,
        ...INSTALLED_EXTENSIONS,
        ...(options.extensions ?? []),
      ],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    };
  }
}
