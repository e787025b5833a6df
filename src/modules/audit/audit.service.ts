import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import type { ApiKeyPrincipal } from '../../common/auth/principal';
import { encodePageKey, decodePageKey } from '../../common/pagination/page-key';
import { toPage } from '../../common/pagination/page-query.dto';
import { AuditEntry } from './audit-entry.entity';
import { AuditEntryRepository } from './audit-entry.repository';
import type { AuditChanges } from './audit.rules';

/** Who acted: an organization's key, or the platform operator (no key). */
export type AuditActor = Pick<ApiKeyPrincipal, 'apiKeyId' | 'keyPrefix'> | { kind: 'operator' };

@Injectable()
export class AuditService {
  constructor(private readonly entries: AuditEntryRepository) {}

  /**
   * Stages an entry on the caller's EntityManager so it commits (or rolls back) with the change it
   * describes: there is never a change without its entry, nor an entry for a change that failed.
   */
  record(
    em: EntityManager,
    entry: { organizationId: string | null; action: string; actor: AuditActor; meta: RequestMeta; changes: AuditChanges },
  ): void {
    const operator = 'kind' in entry.actor && entry.actor.kind === 'operator';
    em.persist(
      new AuditEntry({
        organizationId: entry.organizationId,
        action: entry.action,
        apiKeyId: operator ? null : (entry.actor as { apiKeyId: string }).apiKeyId,
        keyPrefix: operator ? 'operator' : (entry.actor as { keyPrefix: string }).keyPrefix,
        requestId: entry.meta.requestId,
        ip: entry.meta.ip,
        changes: entry.changes,
      }),
    );
  }

  async page(organizationId: string, pageSize: number, pageKey?: string) {
    const before = pageKey ? (decodePageKey(pageKey, ['uuid'])[0] as string) : null;
    const rows = await this.entries.page(organizationId, before, pageSize + 1);
    return toPage(rows, pageSize, (last) => encodePageKey([last.id]));
  }
}
