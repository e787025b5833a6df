import { Module } from '@nestjs/common';
import { SpamInbox } from './spam-inbox';
import { SpamRepository } from './spam.repository';

/**
 * The spam module's intake, apart from the rest of it so that the modules recording chain data
 * (tokens, transactions) can report to it without depending on what judging needs (the chain
 * clients, the tokens module itself).
 */
@Module({
  providers: [SpamRepository, SpamInbox],
  exports: [SpamInbox, SpamRepository],
})
export class SpamInboxModule {}
