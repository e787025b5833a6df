import { whitelistVisibleForSql, whitelistVisibleSql } from './whitelist-filter';

describe('whitelist SQL rule', () => {
  it('reads the organization and contract of the token row for a token alias', () => {
    expect(whitelistVisibleSql('t')).toBe(whitelistVisibleForSql('t."organization_id"', 't."contract_address"'));
  });

  it('refuses anything but plain identifiers, so no input can reach the SQL', () => {
    expect(() => whitelistVisibleSql('t; drop table token')).toThrow();
    expect(() => whitelistVisibleForSql('w."organization_id"', `t."contract_address" or 1=1`)).toThrow();
    expect(() => whitelistVisibleForSql('w.organization_id', 't."contract_address"')).toThrow();
  });
});
