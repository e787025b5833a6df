import { EntityData, EntityName, FilterQuery, LockMode } from '@mikro-orm/core';
import { EntityManager, EntityRepository } from '@mikro-orm/postgresql';
import type { SecretKeyring } from '../../config/app-config';
import { ResealReport, resealColumn, SealedColumn } from '../../database/sealed-columns';
import type { WebhookConfig } from './webhook-config.entity';

/**
 * Every column of this module that holds a sealed secret, sealed with the owning organization's
 * id as context. `secrets:reseal` walks them all: a new sealed column is one more line here.
 */
export const WEBHOOK_CONFIG_SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'webhook_config',
    idColumn: 'organization_id',
    idType: 'uuid',
    column: 'shared_secret_sealed',
    contextColumn: 'organization_id',
  },
  {
    table: 'webhook_config',
    idColumn: 'organization_id',
    idType: 'uuid',
    column: 'previous_shared_secret_sealed',
    contextColumn: 'organization_id',
  },
  { table: 'webhook_endpoint', idColumn: 'id', idType: 'uuid', column: 'shared_secret_sealed', contextColumn: 'organization_id' },
  { table: 'webhook_endpoint', idColumn: 'id', idType: 'uuid', column: 'previous_shared_secret_sealed', contextColumn: 'organization_id' },
];

/** How long the expired-secret cleanup waits for a lock before leaving it to its next run. */
const CLEANUP_LOCK_TIMEOUT_MS = 100;

export class WebhookConfigRepository extends EntityRepository<WebhookConfig> {
  findByOrganization(organizationId: string): Promise<WebhookConfig | null> {
    return this.findOne({ organizationId });
  }

  /**
   * Makes sure the organization's row exists (with the defaults it had implicitly, so nothing
   * observable changes) and locks it until the transaction ends. Concurrent changes to one
   * organization's configuration therefore run one after the other, each judging the state the
   * previous one left. Null when the organization does not exist. Call inside a transaction.
   */
  async lockForChange(organizationId: string): Promise<WebhookConfig | null> {
    await this.em.execute(
      `insert into "webhook_config" ("organization_id", "updated_at")
       select "id", "created_at" from "organization" where "id" = ?
       on conflict ("organization_id") do nothing`,
      [organizationId],
      'run',
    );
    return this.findOne({ organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  /**
   * Switches the organization's default endpoint off with `reason` if it is still on; whether it
   * did. A concurrent change is waited for and judged after it (the condition is re-read under the
   * row lock). A missing row is the disabled default: nothing to do.
   */
  async disableIfEnabled(organizationId: string, reason: string, now: Date): Promise<boolean> {
    const updated = await this.nativeUpdate({ organizationId, enabled: true }, { enabled: false, disabledReason: reason, updatedAt: now });
    return updated > 0;
  }

  /** Re-seals every sealed column of this module with the keyring's current key (see resealColumn). */
  async resealSecrets(keyring: SecretKeyring, batchSize?: number): Promise<ResealReport[]> {
    const reports: ResealReport[] = [];
    for (const column of WEBHOOK_CONFIG_SEALED_COLUMNS) reports.push(await resealColumn(this.em, column, keyring, batchSize));
    return reports;
  }

  /**
   * Erases the previous secrets whose window closed at or before `now`; how many were erased.
   * Gives up at once (and is tried again next time) when a change holds the rows or the table,
   * rather than waiting in line with requests.
   */
  erasePreviousSecretsExpiredBy(now: Date): Promise<number> {
    return erasePreviousSecretsExpiredBy(this.em, this.entityName, now);
  }
}

/**
 * The expired-secret cleanup of any table of this module with a previous-secret pair (the
 * default endpoint's and the other endpoints'): erases those whose window closed at or before
 * `now`, in one statement, giving up at once when a change holds the rows.
 */
export function erasePreviousSecretsExpiredBy<
  T extends { previousSecretExpiresAt: Date | null; previousSharedSecretSealed: string | null },
>(em: EntityManager, entityName: EntityName<T>, now: Date): Promise<number> {
  return em.transactional(async (tx) => {
    await tx.execute(`set local lock_timeout = '${CLEANUP_LOCK_TIMEOUT_MS}ms'`, [], 'run');
    const expired = { previousSecretExpiresAt: { $lte: now } } as FilterQuery<T>;
    const erased = { previousSharedSecretSealed: null, previousSecretExpiresAt: null } as EntityData<T>;
    return tx.nativeUpdate(entityName, expired, erased);
  });
}
