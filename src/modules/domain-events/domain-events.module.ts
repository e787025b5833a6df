import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { DomainEvent } from './domain-event.entity';
import { DomainEventOutbox } from './domain-event.outbox';
import { DomainEventPublisher } from './domain-event.publisher';

@Module({
  imports: [MikroOrmModule.forFeature([DomainEvent])],
  providers: [DomainEventPublisher, DomainEventOutbox],
  exports: [DomainEventPublisher, DomainEventOutbox, MikroOrmModule],
})
export class DomainEventsModule {}
