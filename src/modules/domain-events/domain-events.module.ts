import { MikroOrmModule } from '@mikro-orm/nestjs';
import { Module } from '@nestjs/common';
import { DomainEvent } from './domain-event.entity';
import { DomainEventPublisher } from './domain-event.publisher';

@Module({
  imports: [MikroOrmModule.forFeature([DomainEvent])],
  providers: [DomainEventPublisher],
  exports: [DomainEventPublisher, MikroOrmModule],
})
export class DomainEventsModule {}
