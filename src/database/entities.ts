import { AuditEntry } from '../modules/audit/audit-entry.entity';
import { DomainEvent } from '../modules/domain-events/domain-event.entity';
import { ApiKey } from '../modules/organizations/api-key.entity';
import { Organization } from '../modules/organizations/organization.entity';
import { Token } from '../modules/tokens/token.entity';
import { Balance } from '../modules/transactions/balance.entity';
import { IdempotencyKey } from '../modules/transactions/idempotency-key.entity';
import { NftTransaction } from '../modules/transactions/nft-transaction.entity';
import { Wallet } from '../modules/wallets/wallet.entity';
import { WebhookEndpoint } from '../modules/webhook-config/webhook-endpoint.entity';
import { WebhookAttempt } from '../modules/webhooks/webhook-attempt.entity';
import { WebhookDelivery } from '../modules/webhooks/webhook-delivery.entity';
import { NftWhitelistContract } from '../modules/whitelist/nft-whitelist-contract.entity';
import { NftWhitelist } from '../modules/whitelist/nft-whitelist.entity';

/** Every entity, listed once: the app, the CLI and the migration runner discover the same set. */
export const ENTITIES = [
  Organization,
  ApiKey,
  AuditEntry,
  DomainEvent,
  Wallet,
  Token,
  Balance,
  NftTransaction,
  IdempotencyKey,
  NftWhitelist,
  NftWhitelistContract,
  WebhookEndpoint,
  WebhookDelivery,
  WebhookAttempt,
];
