import { Migration } from '@mikro-orm/migrations';

/**
 * Audit rows cannot be changed in the database. A trigger refuses every UPDATE and TRUNCATE of
 * `audit_entry`, and every DELETE except the retention pruner's: the two SECURITY DEFINER functions
 * below are the only code that marks its own transaction as pruning, and each cuts a chain only at
 * its oldest end while moving the checkpoint, so what remains still verifies. No role is created,
 * so the migration runs for a migrating user without CREATEROLE.
 *
 * Whoever owns the table can still disable the trigger; the keyed chain (AUDIT_CHAIN_KEY) is what
 * makes such an edit detectable. `audit_chain` gains where an organization's keyed part begins and
 * the keyed seal over that position and the head.
 */
export class Migration20261125030000AuditImmutable extends Migration {
  up(): void {
    // When earlier migrations run in the same transaction, audit_chain rows they inserted still
    // have deferred foreign-key checks pending, and a table with pending checks cannot be altered.
    this.addSql('set constraints all immediate;');
    this.addSql(`alter table "audit_chain" add column "keyed_from_seq" bigint null, add column "chain_seal" text null;`);
    this.addSql(`
      create function "audit_entry_immutable"() returns trigger language plpgsql as $fn$
      begin
        if tg_op = 'DELETE' then
          if current_setting('nftw.audit_pruning', true) = 'on' then
            return old;
          end if;
          -- An organization deleted as a whole takes its entries with it (foreign key cascade).
          if old."organization_id" is not null and not exists (select 1 from "organization" where "id" = old."organization_id") then
            return old;
          end if;
        end if;
        raise exception 'audit entries cannot be changed or deleted (% refused)', tg_op
          using errcode = '42501', hint = 'Only the retention pruner deletes audit entries.';
      end
      $fn$;`);
    this.addSql(`
      create trigger "audit_entry_immutable" before update or delete on "audit_entry"
        for each row execute function "audit_entry_immutable"();`);
    this.addSql(`
      create trigger "audit_entry_no_truncate" before truncate on "audit_entry"
        for each statement execute function "audit_entry_immutable"();`);
    // One organization's chain, from its checkpoint up to and including upToSeq: entries deleted,
    // the checkpoint moved to the last one. Returns how many were deleted.
    this.addSql(`
      create function "audit_prune_chain"("p_organization_id" uuid, "p_up_to_seq" bigint) returns integer
        language plpgsql security definer set search_path from current as $fn$
      declare
        "v_checkpoint" bigint;
        "v_hash" text;
        "v_deleted" integer;
      begin
        select "checkpoint_seq" into "v_checkpoint" from "audit_chain" where "organization_id" = "p_organization_id" for update;
        if "v_checkpoint" is null or "p_up_to_seq" <= "v_checkpoint" then
          return 0;
        end if;
        select "hash" into "v_hash" from "audit_entry" where "organization_id" = "p_organization_id" and "chain_seq" = "p_up_to_seq";
        if "v_hash" is null then
          raise exception 'no audit entry at position % of the chain', "p_up_to_seq";
        end if;
        perform set_config('nftw.audit_pruning', 'on', true);
        delete from "audit_entry"
         where "organization_id" = "p_organization_id" and "chain_seq" > "v_checkpoint" and "chain_seq" <= "p_up_to_seq";
        get diagnostics "v_deleted" = row_count;
        perform set_config('nftw.audit_pruning', 'off', true);
        update "audit_chain" set "checkpoint_seq" = "p_up_to_seq", "checkpoint_hash" = "v_hash"
         where "organization_id" = "p_organization_id";
        return "v_deleted";
      end
      $fn$;`);
    // Entries of no organization (operator actions outside any) are in no chain: by age alone.
    this.addSql(`
      create function "audit_prune_unchained"("p_cutoff" timestamptz, "p_limit" integer) returns integer
        language plpgsql security definer set search_path from current as $fn$
      declare
        "v_deleted" integer;
      begin
        perform set_config('nftw.audit_pruning', 'on', true);
        delete from "audit_entry" where "id" in (
          select "id" from "audit_entry" where "organization_id" is null and "created_at" < "p_cutoff" order by "id" limit "p_limit");
        get diagnostics "v_deleted" = row_count;
        perform set_config('nftw.audit_pruning', 'off', true);
        return "v_deleted";
      end
      $fn$;`);
  }

  down(): void {
    this.addSql('drop function if exists "audit_prune_unchained"(timestamptz, integer);');
    this.addSql('drop function if exists "audit_prune_chain"(uuid, bigint);');
    this.addSql('drop trigger if exists "audit_entry_no_truncate" on "audit_entry";');
    this.addSql('drop trigger if exists "audit_entry_immutable" on "audit_entry";');
    this.addSql('drop function if exists "audit_entry_immutable"();');
    this.addSql('alter table "audit_chain" drop column "keyed_from_seq", drop column "chain_seal";');
  }
}
