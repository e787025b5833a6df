import type { DirectSessions } from '../../database/direct-sessions';
import { withSessionAdvisoryLock } from '../../database/raw-sql';

/**
 * Runs `work` while holding PostgreSQL advisory lock `key`, if no other session of the
 * deployment holds it; null (and `work` not run) when one does. The lock is a session lock on a
 * direct connection of its own (DATABASE_DIRECT_URL), held for the whole of `work` (which may run
 * any number of transactions, so a transaction-scoped lock would not do); a process that dies
 * releases it with its connection. Each kind of work has its own fixed key, shared by every
 * process of the deployment.
 */
export function withAdvisoryLock<T>(sessions: DirectSessions, key: number, work: () => Promise<T>): Promise<T | null> {
  return withSessionAdvisoryLock(sessions, key, work);
}
