import type { Options } from '@mikro-orm/core';
import type { PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { AppConfig } from '../../config/app-config';
import { ReplicaRoutingDriver } from './replica-routing.driver';

/**
 * The ORM options for DATABASE_REPLICA_URLS: nothing without replicas. Each replica inherits the
 * primary's pool and connection settings (the ORM copies those it is not given).
 */
export function replicaOrmOptions(config: Pick<AppConfig, 'replicas'>): Partial<Options<PostgreSqlDriver>> {
  if (config.replicas.urls.length === 0) return {};
  return {
    driver: ReplicaRoutingDriver,
    replicas: config.replicas.urls.map((clientUrl, index) => ({ name: `replica-${index + 1}`, clientUrl })),
    // Reads ask for a "read" connection; the driver still decides per request which one that is.
    preferReadReplicas: true,
  };
}
