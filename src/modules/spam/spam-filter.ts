import { RuleHits, SpamView, spamViewOf } from './spam.rules';

/**
 * The spam module's reads for other modules' queries, as SQL on a token row: the token reads and
 * the wallet reads filter and show `spam` inside their own statement (one index probe per token),
 * so pages stay full and a change is seen by the very next request. Only these functions know
 * the spam tables; callers pass trusted column references.
 */

export const SPAM_FILTERS = ['include', 'exclude', 'only'] as const;
export type SpamFilter = (typeof SPAM_FILTERS)[number];

const COLUMN = /^[a-z_][a-z0-9_]*\."[a-z_][a-z0-9_]*"$/;
const ALIAS = /^[a-z_][a-z0-9_]*$/;

function assertColumns(...columns: string[]): void {
  for (const column of columns) if (!COLUMN.test(column)) throw new Error(`unsafe SQL column: ${column}`);
}

/** Whether (chain, contract) is spam for the organization: its override, else any rule fired. False without a chain. */
export function isSpamSql(organizationIdSql: string, chainIdSql: string, contractAddressSql: string): string {
  assertColumns(organizationIdSql, chainIdSql, contractAddressSql);
  return `coalesce(
    (select so."is_spam" from "spam_override" so
      where so."organization_id" = ${organizationIdSql} and so."chain_id" = ${chainIdSql} and so."contract_address" = ${contractAddressSql}),
    (select sc."mass_airdrop" or sc."lure_metadata" from "spam_contract" sc
      where sc."chain_id" = ${chainIdSql} and sc."contract_address" = ${contractAddressSql}),
    false)`;
}

/**
 * The `spam` query filter on a token aliased `tokenAlias` (include: no condition, null), seen by
 * the organization `organizationIdSql` (a trusted column reference).
 */
export function spamFilterSql(filter: SpamFilter | undefined, tokenAlias: string, organizationIdSql: string): string | null {
  if (filter === undefined || filter === 'include') return null;
  if (!ALIAS.test(tokenAlias)) throw new Error(`unsafe SQL alias: ${tokenAlias}`);
  const spam = isSpamSql(organizationIdSql, `${tokenAlias}."chain_id"`, `${tokenAlias}."contract_address"`);
  return filter === 'only' ? spam : `not ${spam}`;
}

/**
 * The spam state of (chain, contract) for an organization as one JSON column (null without a
 * chain); read it back with spamViewFromColumn.
 */
export function spamColumnSql(organizationIdSql: string, chainIdSql: string, contractAddressSql: string): string {
  assertColumns(organizationIdSql, chainIdSql, contractAddressSql);
  return `case when ${chainIdSql} is null then null else json_build_object(
      'rules', (select json_build_object('massAirdrop', sc."mass_airdrop", 'lureMetadata', sc."lure_metadata") from "spam_contract" sc
                 where sc."chain_id" = ${chainIdSql} and sc."contract_address" = ${contractAddressSql}),
      'override', (select so."is_spam" from "spam_override" so
                 where so."organization_id" = ${organizationIdSql} and so."chain_id" = ${chainIdSql} and so."contract_address" = ${contractAddressSql}))
    end`;
}

/** The spam column of the token aliased `tokenAlias`, seen by the token's own organization. */
export function tokenSpamColumnSql(tokenAlias: string): string {
  if (!ALIAS.test(tokenAlias)) throw new Error(`unsafe SQL alias: ${tokenAlias}`);
  return spamColumnSql(`${tokenAlias}."organization_id"`, `${tokenAlias}."chain_id"`, `${tokenAlias}."contract_address"`);
}

/** A token's (or collection's) `spam` from the column of spamColumnSql: null for API-recorded ones. */
export function spamViewFromColumn(value: unknown): SpamView | null {
  if (value === null || value === undefined) return null;
  const state = (typeof value === 'string' ? JSON.parse(value) : value) as { rules: RuleHits | null; override: boolean | null };
  return spamViewOf(state.rules ?? null, state.override ?? null);
}

/**
 * What the contract (chain, contract) says of itself, as one JSON column `{name, symbol}` (null
 * until read, or without a chain); read it back with contractProfileFromColumn.
 */
export function contractProfileColumnSql(chainIdSql: string, contractAddressSql: string): string {
  assertColumns(chainIdSql, contractAddressSql);
  return `(select json_build_object('name', cc."name", 'symbol', cc."symbol") from "chain_contract" cc
            where cc."chain_id" = ${chainIdSql} and cc."contract_address" = ${contractAddressSql})`;
}

export interface ContractProfile {
  name: string | null;
  symbol: string | null;
}

export function contractProfileFromColumn(value: unknown): ContractProfile {
  if (value === null || value === undefined) return { name: null, symbol: null };
  const profile = (typeof value === 'string' ? JSON.parse(value) : value) as ContractProfile;
  return { name: profile.name ?? null, symbol: profile.symbol ?? null };
}
