import type { EntityClass, MigrationObject } from '@mikro-orm/core';
import { extensionEntities, extensionMigrations } from './extensions/registry';
import { AuditEntry } from './modules/audit/audit-entry.entity';
import { DomainEvent } from './modules/domain-events/domain-event.entity';
import { ApiKey } from './modules/organizations/api-key.entity';
import { Organization } from './modules/organizations/organization.entity';
import { Token } from './modules/tokens/token.entity';
import { Balance } from './modules/transactions/balance.entity';
import { IdempotencyKey } from './modules/transactions/idempotency-key.entity';
import { NftTransaction } from './modules/transactions/nft-transaction.entity';
import { Wallet } from './modules/wallets/wallet.entity';
import { WebhookEndpoint } from './modules/webhook-endpoints/webhook-endpoint.entity';
import { WebhookAttempt } from './modules/webhooks/webhook-attempt.entity';
import { WebhookDelivery } from './modules/webhooks/webhook-delivery.entity';
import { NftWhitelistContract } from './modules/whitelist/nft-whitelist-contract.entity';
import { NftWhitelist } from './modules/whitelist/nft-whitelist.entity';

/** Every entity of the built-in modules, listed once: the app, the CLI and the mikro-orm CLI map the same set. */
export const ENTITIES: readonly EntityClass<object>[] = [
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

/**
 * What this deployment's ORM maps and migrates besides the built-in migrations: the built-in
 * entities, then the entities and migrations of the extension modules registered so far (read
 * when called, since an extension registers itself when its module is declared). src/database
 * builds the ORM from it without knowing the modules.
 */
export function ormModel(): { entities: EntityClass<object>[]; migrations: MigrationObject[] } {
  return { entities: [...ENTITIES, ...extensionEntities()], migrations: extensionMigrations() };
}
