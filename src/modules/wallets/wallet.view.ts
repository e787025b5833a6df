const SAFE_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * One wallet of one organization as a row of a read that pages another module's rows beside it
 * (the balances page): a derived table that PostgreSQL folds into the caller's query, one
 * primary-key probe. It holds no row when the wallet is unknown or another organization's, so
 * such a read answers "no such wallet" in the same statement. Takes two `?` placeholders, in
 * this order: the wallet id, then the organization id. Columns: `id`, `organization_id`.
 *
 * @param alias the alias the caller's query names the row by (a trusted identifier).
 */
export function walletOfOrganizationSql(alias: string): string {
  if (!SAFE_IDENTIFIER.test(alias)) throw new Error(`unsafe SQL alias: ${alias}`);
  return `(select "id", "organization_id" from "wallet" where "id" = ?::uuid and "organization_id" = ?::uuid) ${alias}`;
}
