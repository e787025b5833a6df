import { MikroORM } from '@mikro-orm/core';
import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { AuditChainSubscriber } from './audit-chain.subscriber';
import { AuditEntry } from './audit-entry.entity';
import { AuditPruner } from './audit-pruner.service';
import { AuditController } from './audit.controller';
import { AuditService } from './audit.service';

@Module({
  imports: [MikroOrmModule.forFeature([AuditEntry])],
  controllers: [AuditController],
  providers: [AuditService, AuditPruner],
  exports: [AuditService],
})
export class AuditModule implements OnModuleInit {
  constructor(
    private readonly orm: MikroORM,
    private readonly config: AppConfig,
  ) {}

  /** Before any request: every transaction that records an entry links it into the chain. */
  onModuleInit(): void {
    const events = this.orm.em.getEventManager();
    if (![...events.getSubscribers()].some((s) => s instanceof AuditChainSubscriber))
      events.registerSubscriber(new AuditChainSubscriber(this.config.audit.chainKey));
  }
}
