import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ChainModule } from '../chain/chain.module';
import { DomainEventsModule } from '../domain-events/domain-events.module';
import { TokensModule } from '../tokens/tokens.module';
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
@Module({
  imports: [SpamInboxModule, TokensModule, ChainModule, DomainEventsModule, AuditModule],
  controllers: [SpamOverridesController],
  providers: [SpamService, SpamWorker],
  exports: [SpamService],
})
export class SpamModule {}
