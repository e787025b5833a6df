import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { NftWhitelistContract } from './nft-whitelist-contract.entity';
import { NftWhitelist } from './nft-whitelist.entity';
import { WhitelistController } from './whitelist.controller';
import { WhitelistService } from './whitelist.service';

@Module({
  imports: [MikroOrmModule.forFeature([NftWhitelist, NftWhitelistContract]), AuditModule],
  controllers: [WhitelistController],
  providers: [WhitelistService],
})
export class WhitelistModule {}
