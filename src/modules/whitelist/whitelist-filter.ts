/**
 * The whitelist rule as one SQL condition on a token row, so the read queries filter inside the
 * database (pages stay full) and see a change on the very next request (no per-process cache).
 * True when the token's organization has the whitelist switched off, or the token's contract is
 * on it. Contract addresses are stored lowercase on both sides, so equality ignores case.
 *
 * @param tokenAlias SQL alias of the `token` table in the caller's query (a trusted identifier).
 */
export function whitelistVisibleSql(tokenAlias: string): string {
  assertAlias(tokenAlias);
  return whitelistVisibleForSql(`${tokenAlias}."organization_id"`, `${tokenAlias}."contract_address"`);
}

/**
 * The same rule for a query that already knows the organization from another row (e.g. the
 * wallet's). With the organization constant for the whole query, PostgreSQL reads the switch once
 * and checks contracts against that organization's primary-key range only, instead of per row.
 *
 * @param organizationIdSql a trusted column reference, e.g. `w."organization_id"`.
 * @param contractAddressSql a trusted column reference holding a lowercase address.
 */
export function whitelistVisibleForSql(organizationIdSql: string, contractAddressSql: string): string {
  for (const column of [organizationIdSql, contractAddressSql]) {
    if (!/^[a-z_][a-z0-9_]*\."[a-z_][a-z0-9_]*"$/.test(column)) throw new Error(`unsafe SQL column: ${column}`);
  }
  return `(not exists (select 1 from "nft_whitelist" wl where wl."organization_id" = ${organizationIdSql} and wl."enabled")
    or exists (select 1 from "nft_whitelist_contract" wc where wc."organization_id" = ${organizationIdSql} and wc."contract_address" = ${contractAddressSql}))`;
}

function assertAlias(alias: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(alias)) throw new Error(`unsafe SQL alias: ${alias}`);
}
