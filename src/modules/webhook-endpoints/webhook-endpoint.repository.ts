import { LockMode } from '@mikro-orm/core';
import { EntityRepository } from '@mikro-orm/postgresql';
import type { SecretKeyring } from '../../config/secrets-config';
import { ResealReport, resealColumn, SealedColumn } from '../../database/sealed-columns';
import type { WebhookEndpoint } from './webhook-endpoint.entity';
import { execute, executeScript } from '../../database/raw-sql';
import { Organization } from '../organizations/organization.entity';
import { isDefaultEndpoint } from './webhook-endpoint.rules';

/**
 * Every column of this module that holds a sealed secret, sealed with the owning organization's
 * id as context. `secrets:reseal` walks them all: a new sealed column is one more line here.
 */
export const WEBHOOK_ENDPOINT_SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'webhook_endpoint', idColumn: 'id', idType: 'uuid', column: 'shared_secret_sealed', contextColumn: 'organization_id' },
  { table: 'webhook_endpoint', idColumn: 'id', idType: 'uuid', column: 'previous_shared_secret_sealed', contextColumn: 'organization_id' },
  { table: 'webhook_endpoint', idColumn: 'id', idType: 'uuid', column: 'signing_private_key_sealed', contextColumn: 'organization_id' },
  {
    table: 'webhook_endpoint',
    idColumn: 'id',
    idType: 'uuid',
    column: 'previous_signing_private_key_sealed',
    contextColumn: 'organization_id',
  },
  { table: 'webhook_endpoint', idColumn: 'id', idType: 'uuid', column: 'auth_client_secret_sealed', contextColumn: 'organization_id' },
  { table: 'webhook_endpoint', idColumn: 'id', idType: 'uuid', column: 'tls_client_key_sealed', contextColumn: 'organization_id' },
  {
    table: 'webhook_endpoint',
    idColumn: 'id',
    idType: 'uuid',
    column: 'destination_credentials_sealed',
    contextColumn: 'organization_id',
  },
];

/** How long the expired-secret cleanup waits for a lock before leaving it to its next run. */
const CLEANUP_LOCK_TIMEOUT_MS = 100;

export class WebhookEndpointRepository extends EntityRepository<WebhookEndpoint> {
  /** The endpoint if it is this organization's; another organization's is as unknown as a missing one. */
  findOwned(organizationId: string, id: string): Promise<WebhookEndpoint | null> {
    return this.findOne({ id, organizationId });
  }

  /**
   * Locks the endpoint until the transaction ends, so concurrent changes to it run one after the
   * other, each judging the state the previous one left; null when it is not the organization's.
   * The default endpoint's row is made first when it has none yet (disabled, nothing configured,
   * created and last changed when the organization was: nothing observable changes). Locking the
   * default also serializes the creation of the organization's other endpoints. Call inside a
   * transaction.
   */
  async lockForChange(organizationId: string, id: string): Promise<WebhookEndpoint | null> {
    if (isDefaultEndpoint(id, organizationId)) {
      // The organizations module says when (and whether) the organization was created.
      const createdAt = await this.em.getRepository(Organization).createdAtOf(organizationId);
      if (createdAt === null) return null;
      await execute(
        this.em,
        `insert into "webhook_endpoint" ("id", "organization_id", "is_default", "enabled", "webhook_types", "created_at", "updated_at")
         values (?, ?, true, false, '{}', ?, ?)
         on conflict do nothing`,
        [organizationId, organizationId, createdAt, createdAt],
      );
    }
    return this.findOne({ id, organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  /** How many endpoints the organization has beside its default one. */
  countOthers(organizationId: string): Promise<number> {
    return this.count({ organizationId, isDefault: false });
  }

  /** Up to `limit` endpoints of the organization beside the default, after `afterId`, in id (creation) order. */
  pageOthers(organizationId: string, afterId: string | null, limit: number): Promise<WebhookEndpoint[]> {
    const where = afterId === null ? { organizationId, isDefault: false } : { organizationId, isDefault: false, id: { $gt: afterId } };
    return this.find(where, { orderBy: { id: 'asc' }, limit });
  }

  /**
   * Switches the endpoint off with `reason` if it is still on; whether it did. A concurrent change
   * is waited for and judged after it (the condition is re-read under the row lock). A default
   * endpoint without a row is disabled already: nothing to do.
   */
  async disableIfEnabled(organizationId: string, id: string, reason: string, now: Date): Promise<boolean> {
    const updated = await this.nativeUpdate(
      { id, organizationId, enabled: true },
      { enabled: false, disabledReason: reason, updatedAt: now },
    );
    return updated > 0;
  }

  /**
   * Erases the previous secrets whose window closed at or before `now`, in one statement; how
   * many were erased. Gives up at once (and is tried again next time) when a change holds the
   * rows or the table, rather than waiting in line with requests.
   */
  erasePreviousSecretsExpiredBy(now: Date): Promise<number> {
    return this.em.transactional(async (tx) => {
      await executeScript(tx, `set local lock_timeout = '${CLEANUP_LOCK_TIMEOUT_MS}ms'`);
      return tx.nativeUpdate(
        this.entityName,
        { previousSecretExpiresAt: { $lte: now } },
        {
          previousSharedSecretSealed: null,
          previousSecretExpiresAt: null,
          previousSigningPrivateKeySealed: null,
          previousSigningPublicKey: null,
        },
      );
    });
  }

  /** Re-seals every sealed column of this module with the keyring's current key (see resealColumn). */
  async resealSecrets(keyring: SecretKeyring, batchSize?: number): Promise<ResealReport[]> {
    const reports: ResealReport[] = [];
    for (const column of WEBHOOK_ENDPOINT_SEALED_COLUMNS) reports.push(await resealColumn(this.em, column, keyring, batchSize));
    return reports;
  }
}
