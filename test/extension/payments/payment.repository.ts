import { EntityRepository } from '@mikro-orm/postgresql';
import type { Payment } from './payment.entity';

export class PaymentRepository extends EntityRepository<Payment> {
  findInOrganization(organizationId: string, id: string): Promise<Payment | null> {
    return this.findOne({ organizationId, id });
  }
}
