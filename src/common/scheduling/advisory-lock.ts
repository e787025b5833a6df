import type { EntityManager } from '@mikro-orm/postgresql';
import { withSessionAdvisoryLock } from '../../database/raw-sql';

/**
 * Runs `work` while holding PostgreSQL advisory lock `key`, if no other session of the
 * deployment holds it; null (and `work` not run) when one does. The lock is a session lock on a
 * connection of its own, held for the whole of `work` (which may run any number of
 * transactions); a process that dies releases it with its connection. Each kind of work has its
 * own fixed key, shared by every process of the deployment.
 */
export function withAdvisoryLock<T>(em: EntityManager, key: number, work: () => Promise<T>): Promise<T | null> {
  return withSessionAdvisoryLock(em, key, work);
}
