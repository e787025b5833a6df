import { EntityRepository } from '@mikro-orm/postgresql';
import type { DomainEvent } from './domain-event.entity';

export class DomainEventRepository extends EntityRepository<DomainEvent> {
  forResource(organizationId: string, resourceId: string): Promise<DomainEvent[]> {
    return this.find({ organizationId, resourceId }, { orderBy: { id: 'asc' } });
  }
}
