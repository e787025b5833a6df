import type { ExtensionDefinition } from '../../../src/extensions/registry';
import { Migration20261123120000Payments } from './migrations/Migration20261123120000Payments';
import { Payment } from './payment.entity';

/** Everything this module adds to the service: its table, its migration, the webhooks it sends. */
export const PAYMENTS_EXTENSION: ExtensionDefinition = {
  name: 'payments',
  entities: [Payment],
  migrations: [{ name: 'Migration20261123120000Payments', class: Migration20261123120000Payments }],
  eventTypes: [{ webhookType: 'payment', resourceType: 'Payment', actions: ['create'] }],
  errors: { PAYMENT_NOT_FOUND: { status: 404, title: 'Not Found', meaning: 'The payment is unknown, or another organization’s.' } },
};

/** The same codes for the compiler: `notFound('PAYMENT_NOT_FOUND', …)` type-checks with this. */
declare module '../../../src/common/errors/error-catalogue' {
  interface ExtensionErrorCodes {
    PAYMENT_NOT_FOUND: { status: 404 };
  }
}
