import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { DomainEvent } from './domain-event.entity';
import { DomainEventPublisher } from './domain-event.publisher';
import { DomainEventStore } from './domain-event.store';
import { EventResources } from './event-resources';

@Module({
  imports: [MikroOrmModule.forFeature([DomainEvent])],
  providers: [DomainEventPublisher, DomainEventStore, EventResources],
  exports: [DomainEventPublisher, DomainEventStore, EventResources, MikroOrmModule],
})
export class DomainEventsModule {}
