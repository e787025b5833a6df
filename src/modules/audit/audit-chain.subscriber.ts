import { ChangeSetType, EventSubscriber, FlushEventArgs } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { chainHash, chainSeal, sealMatches } from './audit-chain';
import { AuditEntry } from './audit-entry.entity';
import { exportedOf } from './dto/audit-entry.response.dto';
import { execute, queryRows } from '../../database/raw-sql';

/**
 * Links every new audit entry into its organization's chain while the transaction that writes it
 * flushes. The `audit_chain` row of the organization is locked (by the upsert) until that
 * transaction ends, so concurrent writers append one after the other and the chain never forks;
 * a rolled-back write leaves the head where it was.
 */
export class AuditChainSubscriber implements EventSubscriber {
  /** `key`: AUDIT_CHAIN_KEY, or null to write plain SHA-256 links (development only). */
  constructor(private readonly key: Buffer | null = null) {}

  async onFlush(args: FlushEventArgs): Promise<void> {
    const created = args.uow
      .getChangeSets()
      .filter((cs) => cs.type === ChangeSetType.CREATE && cs.entity instanceof AuditEntry)
      .map((cs) => cs.entity as AuditEntry)
      .filter((entry) => entry.organizationId !== null && entry.hash === null);
    if (created.length === 0) return;
    if (!args.em.isInTransaction()) {
      // Outside a transaction the lock would end before the insert: the chain could fork.
      throw new Error('Audit entries are recorded inside the transaction of the change they describe.');
    }
    const em = args.em as EntityManager;
    const byOrganization = new Map<string, AuditEntry[]>();
    for (const entry of created) byOrganization.set(entry.organizationId!, [...(byOrganization.get(entry.organizationId!) ?? []), entry]);
    // A fixed lock order keeps two transactions touching the same organizations from deadlocking.
    for (const organizationId of [...byOrganization.keys()].sort()) {
      const [head] = await queryRows<{ head_seq: string; head_hash: string; keyed_from_seq: string | null; chain_seal: string | null }>(
        em,
        `insert into "audit_chain" ("organization_id") values (?)
         on conflict ("organization_id") do update set "head_seq" = "audit_chain"."head_seq"
         returning "head_seq", "head_hash", "keyed_from_seq", "chain_seal"`,
        [organizationId],
      );
      let seq = Number(head.head_seq);
      let hash = head.head_hash;
      const keyedFrom = head.keyed_from_seq === null ? null : Number(head.keyed_from_seq);
      if (keyedFrom !== null && !this.key) {
        // Plain links after keyed ones would make the rest of the chain unverifiable.
        throw new Error('This audit chain is keyed: set AUDIT_CHAIN_KEY to record entries.');
      }
      for (const entry of byOrganization.get(organizationId)!) {
        seq += 1;
        hash = chainHash(hash, exportedOf(entry), this.key);
        entry.chainSeq = seq;
        entry.hash = hash;
        args.uow.recomputeSingleChangeSet(entry);
      }
      if (!this.key) {
        await execute(em, `update "audit_chain" set "head_seq" = ?, "head_hash" = ? where "organization_id" = ?`, [
          seq,
          hash,
          organizationId,
        ]);
        continue;
      }
      // The keyed part begins with the first entry written with the key. A seal that no longer
      // matches (the state was edited in the database) is left broken, never re-sealed over.
      const start = keyedFrom ?? Number(head.head_seq) + 1;
      const intact =
        keyedFrom === null ||
        sealMatches(chainSeal(this.key, organizationId, keyedFrom, Number(head.head_seq), head.head_hash), head.chain_seal);
      const seal = intact ? chainSeal(this.key, organizationId, start, seq, hash) : head.chain_seal;
      await execute(
        em,
        `update "audit_chain" set "head_seq" = ?, "head_hash" = ?, "keyed_from_seq" = ?, "chain_seal" = ? where "organization_id" = ?`,
        [seq, hash, start, seal, organizationId],
      );
    }
  }
}
