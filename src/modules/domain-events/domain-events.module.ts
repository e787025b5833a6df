import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { DomainEvent } from './domain-event.entity';
import { DomainEventPublisher } from './domain-event.publisher';
import { DomainEventStore } from './domain-event.store';

@Module({
  imports: [MikroOrmModule.forFeature([DomainEvent])],
  providers: [DomainEventPublisher, DomainEventStore],
  exports: [DomainEventPublisher, DomainEventStore, MikroOrmModule],
})
export class DomainEventsModule {}
