/**
 * The whitelist rule as one SQL condition on a token row, so the read queries filter inside the
 * database (pages stay full) and see a change on the very next request (no per-process cache).
 * True when the token's organization has the whitelist switched off, or the token's contract is
 * on it. Contract addresses are stored lowercase on both sides, so equality ignores case.
 *
 * @param tokenAlias SQL alias of the `token` table in the caller's query (a trusted identifier).
 */
export function whitelistVisibleSql(tokenAlias: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(tokenAlias)) throw new Error(`unsafe SQL alias: ${tokenAlias}`);
  return `(not exists (select 1 from "nft_whitelist" wl where wl."organization_id" = ${tokenAlias}."organization_id" and wl."enabled")
    or exists (select 1 from "nft_whitelist_contract" wc where wc."organization_id" = ${tokenAlias}."organization_id" and wc."contract_address" = ${tokenAlias}."contract_address"))`;
}
