import { IsolationLevel } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { RequestMeta } from '../../common/auth/current-principal.decorator';
import type { Principal } from '../../common/auth/principal';
import { encodePageKey, decodePageKey } from '../../common/pagination/page-key';
import { toPage } from '../../common/pagination/page-query.dto';
import { AppConfig } from '../../config/app-config';
import { ChainVerdict, ChainVerifier, chainSeal, sealMatches } from './audit-chain';
import { AuditEntry } from './audit-entry.entity';
import { AuditEntryRepository, ChainedEntry } from './audit-entry.repository';
import type { AuditChanges } from './audit.rules';

/**
 * Who acted: the authenticated principal of the request (an organization's key or the platform
 * operator), or the service itself (no key, no request), e.g. switching off an endpoint that keeps
 * failing. Callers pass the principal as the guard set it; only `auditIdentity` turns it into the
 * recorded fields.
 */
export type AuditActor = Principal | { kind: 'system' };

/** The service acting on its own; recorded with `keyPrefix` "system" and no key. */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({ kind: 'system' });

/**
 * The one mapping from an actor to what an audit entry records: an API key's id and its
 * 13-character prefix, or no key and `operator` / `system`. Exhaustive over `kind`, so a new kind
 * of principal does not compile until it is mapped here.
 */
export function auditIdentity(actor: AuditActor): { apiKeyId: string | null; keyPrefix: string } {
  switch (actor.kind) {
    case 'apiKey':
      return { apiKeyId: actor.apiKeyId, keyPrefix: actor.keyPrefix };
    case 'operator':
      return { apiKeyId: null, keyPrefix: 'operator' };
    case 'system':
      return { apiKeyId: null, keyPrefix: 'system' };
    default: {
      const unknown: never = actor;
      throw new Error(`unmapped audit actor ${JSON.stringify(unknown)}`);
    }
  }
}

/** Rows read per query by verify and export: what bounds their memory, whatever the chain length. */
const CHAIN_PAGE = 1000;

/** Verify and export read one consistent snapshot, so a concurrent append or prune cannot look like tampering. */
const SNAPSHOT = { isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true } as const;

@Injectable()
export class AuditService {
  constructor(
    private readonly em: EntityManager,
    private readonly entries: AuditEntryRepository,
    private readonly config: AppConfig,
  ) {}

  /**
   * Stages an entry on the caller's EntityManager so it commits (or rolls back) with the change it
   * describes: there is never a change without its entry, nor an entry for a change that failed.
   * The entry is linked into its organization's hash chain when that transaction flushes.
   */
  record(
    em: EntityManager,
    entry: { organizationId: string | null; action: string; actor: AuditActor; meta: RequestMeta; changes: AuditChanges },
  ): void {
    em.persist(
      new AuditEntry({
        organizationId: entry.organizationId,
        action: entry.action,
        ...auditIdentity(entry.actor),
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

  /**
   * Recomputes the organization's chain from the retention checkpoint to the head, one page at a
   * time. An edited, deleted, inserted or reordered row breaks it at the first entry affected;
   * deleting the newest entries shows as a head the remaining chain no longer reaches.
   */
  verify(organizationId: string): Promise<ChainVerdict> {
    const key = this.config.audit.chainKey;
    return this.em.fork().transactional(async (em) => {
      const entries = em.getRepository(AuditEntry);
      const state = await entries.chainState(organizationId);
      // The keyed part's start and the head are sealed with the key: an edited seal (a start moved
      // to hide recomputed plain hashes, or a head moved back over deleted entries) fails verify.
      const sealed =
        state.keyedFromSeq === null ||
        (key !== null && sealMatches(chainSeal(key, organizationId, state.keyedFromSeq, state.headSeq, state.headHash), state.chainSeal));
      const verifier = new ChainVerifier(state.checkpointHash, state.checkpointSeq, { key, fromSeq: state.keyedFromSeq });
      let after = state.checkpointSeq;
      let lastId: string | null = null;
      for (;;) {
        const page = await entries.chainPage(organizationId, after, CHAIN_PAGE);
        for (const entry of page) verifier.add(entry, entry.seq);
        if (page.length === 0) break;
        after = page[page.length - 1].seq;
        lastId = page[page.length - 1].id;
        if (page.length < CHAIN_PAGE) break;
      }
      const verdict = verifier.verdict(state.headHash, lastId);
      const keyed = verdict.keyedFromEntryId === undefined ? {} : { keyedFromEntryId: verdict.keyedFromEntryId };
      // Rows beyond the recorded head (inserted by hand) are not part of the chain.
      if (verdict.valid && (after > state.headSeq || !sealed))
        return { valid: false, entries: verdict.entries, firstBrokenEntryId: lastId, ...keyed };
      return verdict;
    }, SNAPSHOT);
  }

  /**
   * Streams the chain, or the contiguous part of it written in [since, until), oldest first.
   * `start` receives the hash the first entry links to (so the export verifies on its own) and the
   * line where the keyed part begins, before any entry; `write` receives one page at a time and may wait (back-pressure).
   *
   * The extent (from a checkpoint to the head) is fixed in one snapshot; the pages are then read
   * one short query at a time, so a slow client holds no transaction or connection open. Entries
   * appended meanwhile lie beyond the head and are not part of this export; if retention prunes
   * entries this export had yet to send, it fails rather than send a chain with a hole in it.
   */
  async export(
    organizationId: string,
    window: { since: Date | null; until: Date | null },
    start: (previousHash: string, keyedFromLine: number | null) => void,
    write: (page: ChainedEntry[]) => Promise<boolean>,
  ): Promise<void> {
    const extent = await this.em.fork().transactional(async (em) => {
      const entries = em.getRepository(AuditEntry);
      const state = await entries.chainState(organizationId);
      const range = await entries.seqRange(organizationId, state.checkpointSeq, window.since, window.until);
      if (!range) return { range: null, previous: state.headHash, keyedFromSeq: state.keyedFromSeq };
      const previous =
        range.first - 1 <= state.checkpointSeq ? state.checkpointHash : await entries.hashAt(organizationId, range.first - 1);
      return { range, previous: previous ?? state.checkpointHash, keyedFromSeq: state.keyedFromSeq };
    }, SNAPSHOT);
    // Which line of the export is the first hashed with the key (1-based), so a holder of the key
    // verifies the file offline: plain SHA-256 before it, HMAC-SHA256 from it.
    const keyedFromLine =
      extent.range && extent.keyedFromSeq !== null && extent.keyedFromSeq <= extent.range.last
        ? Math.max(1, extent.keyedFromSeq - extent.range.first + 1)
        : null;
    start(extent.previous, keyedFromLine);
    if (!extent.range) return;
    const entries = this.em.fork().getRepository(AuditEntry);
    let after = extent.range.first - 1;
    while (after < extent.range.last) {
      const page = await entries.chainPage(organizationId, after, CHAIN_PAGE, extent.range.last);
      const gap = page.length === 0 || page[0].seq !== after + 1;
      // A gap the checkpoint explains was pruned under this export; any other is tampering, which
      // the export shows as it is (verification of the file then fails at that point).
      if (gap && (await entries.chainState(organizationId)).checkpointSeq > after) {
        throw new Error('Audit entries were pruned while this export was reading them.');
      }
      if (page.length === 0) break;
      if (!(await write(page))) break;
      after = page[page.length - 1].seq;
    }
  }
}
