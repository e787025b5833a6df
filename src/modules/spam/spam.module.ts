import { DynamicModule, Module, Type } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ChainModule } from '../chain/chain.module';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { ContractTokens } from './contract-tokens';
import { SpamInboxModule } from './spam-inbox.module';
import { SpamOverridesController } from './spam-overrides.controller';
import { SpamService } from './spam.service';
import { SpamWorker } from './spam.worker';

/**
 * Spam (docs/API.md "Activity, collections and spam"): owns `spam_contract` (the rules that fired per chain contract),
 * `spam_override` (each organization's verdicts), `chain_contract` (a contract's name() and
 * symbol(), read once) and `spam_judgement` (what waits to be judged). The tokens and
 * transactions modules report through SpamInbox (spam-inbox.module.ts) and read through the SQL
 * of spam-filter.ts; SpamService is the reader and reporter for everyone else.
 */
@Module({})
export class SpamModule {
  /**
   * @param options.imports the module exporting `tokens`
   * @param options.tokens the owner of tokens, answering ContractTokens (the tokens module's TokensService)
   */
  static forRoot(options: { imports: (Type | DynamicModule)[]; tokens: Type<ContractTokens> }): DynamicModule {
    return {
      module: SpamModule,
      // Read by the modules that show chain contracts (the whole-contract index); registered once, by the application.
      global: true,
      imports: [SpamInboxModule, ChainModule, DomainEventsModule, AuditModule, ...options.imports],
      controllers: [SpamOverridesController],
      providers: [SpamService, SpamWorker, { provide: ContractTokens, useExisting: options.tokens }],
      exports: [SpamService],
    };
  }
}
