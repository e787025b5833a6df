import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { notFound } from '../../../src/common/errors/domain-error';
import { DomainEventPublisher } from '../../../src/modules/domain-events/domain-event.publisher';
import { WalletsService } from '../../../src/modules/wallets/wallets.service';
import type { CreatePaymentRequestDto } from './dto/create-payment.request.dto';
import { Payment } from './payment.entity';
import { PaymentRepository } from './payment.repository';

@Injectable()
export class PaymentsService {
  constructor(
    private readonly em: EntityManager,
    private readonly payments: PaymentRepository,
    private readonly wallets: WalletsService,
    private readonly events: DomainEventPublisher,
  ) {}

  /** The payment and its `payment` event commit together, or neither does. */
  async create(organizationId: string, input: CreatePaymentRequestDto): Promise<Payment> {
    return this.em.transactional(async (em) => {
      await this.wallets.requireInTransaction(em, organizationId, input.walletId);
      const payment = new Payment({ organizationId, walletId: input.walletId, amount: input.amount, reference: input.reference });
      em.persist(payment);
      this.events.publish(em, organizationId, {
        webhookType: 'payment',
        resourceType: 'Payment',
        action: 'create',
        resourceId: payment.id,
        changes: null,
      });
      return payment;
    });
  }

  async get(organizationId: string, paymentId: string): Promise<Payment> {
    const payment = await this.payments.findInOrganization(organizationId, paymentId);
    if (!payment) throw notFound('PAYMENT_NOT_FOUND', `Payment ${paymentId} does not exist.`);
    return payment;
  }
}
