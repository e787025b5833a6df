import { Migration } from '@mikro-orm/migrations';
import { formatDbTimestamp } from '../src/common/time';
import { chainHash, GENESIS_HASH } from '../src/modules/audit/audit-chain';

const BATCH = 1000;

interface Row {
  id: string;
  action: string;
  api_key_id: string | null;
  key_prefix: string | null;
  request_id: string | null;
  ip: string | null;
  created_at: string | Date;
  changes: Record<string, { from: unknown; to: unknown }>;
}

/**
 * The auditor role, and the tamper-evident audit chain: every organization's entries get a
 * position and a hash chained to the previous entry's, and one `audit_chain` row per organization
 * holds the head (where the next entry links, and the row appends lock so concurrent writes form
 * one chain) and the checkpoint retention leaves behind. Existing entries are chained here, in the
 * order they were written.
 */
export class Migration20261123100000AuditChain extends Migration {
  async up(): Promise<void> {
    await this.execute(`alter table "api_key" drop constraint "api_key_roles_check";`);
    await this.execute(`
      alter table "api_key" add constraint "api_key_roles_check"
        check ("roles" <@ array['read','write','admin','auditor']::text[] and cardinality("roles") > 0);`);
    await this.execute(`alter table "audit_entry" add column "chain_seq" bigint null, add column "hash" text null;`);
    await this.execute(`
      create table "audit_chain" (
        -- Deferred: an organization's first entry is chained before the organization row is inserted.
        "organization_id" uuid primary key references "organization" ("id") on delete cascade deferrable initially deferred,
        "head_seq" bigint not null default 0,
        "head_hash" text not null default '${GENESIS_HASH}',
        "checkpoint_seq" bigint not null default 0,
        "checkpoint_hash" text not null default '${GENESIS_HASH}'
      );`);

    const organizations = (await this.execute(
      `select distinct "organization_id" as id from "audit_entry" where "organization_id" is not null`,
    )) as { id: string }[];
    for (const { id: organizationId } of organizations) {
      let previous = GENESIS_HASH;
      let seq = 0;
      let after: { createdAt: string | Date; id: string } | null = null;
      for (;;) {
        const rows = (await this.execute(
          `select "id", "action", "api_key_id", "key_prefix", "request_id", "ip", "created_at", "changes"
             from "audit_entry"
            where "organization_id" = ? ${after ? 'and ("created_at", "id") > (?, ?)' : ''}
            order by "created_at", "id" limit ${BATCH}`,
          after ? [organizationId, after.createdAt, after.id] : [organizationId],
        )) as Row[];
        for (const row of rows) {
          seq += 1;
          previous = chainHash(previous, {
            id: row.id,
            action: row.action,
            apiKeyId: row.api_key_id,
            keyPrefix: row.key_prefix,
            requestId: row.request_id,
            ip: row.ip,
            createdAtUtc: formatDbTimestamp(row.created_at),
            changes: row.changes,
          });
          await this.execute(`update "audit_entry" set "chain_seq" = ?, "hash" = ? where "id" = ?`, [seq, previous, row.id]);
        }
        if (rows.length < BATCH) break;
        const last = rows[rows.length - 1];
        after = { createdAt: last.created_at, id: last.id };
      }
      await this.execute(`insert into "audit_chain" ("organization_id", "head_seq", "head_hash") values (?, ?, ?)`, [
        organizationId,
        seq,
        previous,
      ]);
    }

    await this.execute(`
      alter table "audit_entry" add constraint "audit_entry_chained_check"
        check ("organization_id" is null or ("chain_seq" is not null and "hash" is not null));`);
    await this.execute(
      `create unique index "audit_entry_organization_id_chain_seq_unique" on "audit_entry" ("organization_id", "chain_seq");`,
    );
  }

  down(): void {
    this.addSql('drop index if exists "audit_entry_organization_id_chain_seq_unique";');
    this.addSql('alter table "audit_entry" drop constraint if exists "audit_entry_chained_check";');
    this.addSql('drop table if exists "audit_chain";');
    this.addSql('alter table "audit_entry" drop column "chain_seq", drop column "hash";');
    this.addSql(`delete from "api_key" where 'auditor' = any("roles");`);
    this.addSql('alter table "api_key" drop constraint "api_key_roles_check";');
    this.addSql(`
      alter table "api_key" add constraint "api_key_roles_check"
        check ("roles" <@ array['read','write','admin']::text[] and cardinality("roles") > 0);`);
  }
}
