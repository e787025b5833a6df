import { contractProfileFromColumn, spamFilterSql, spamViewFromColumn, tokenSpamColumnSql } from './spam-filter';

describe('spam reads for other queries', () => {
  it('filters nothing for include (the default), negates for exclude', () => {
    expect(spamFilterSql(undefined, 't', 'w."organization_id"')).toBeNull();
    expect(spamFilterSql('include', 't', 'w."organization_id"')).toBeNull();
    expect(spamFilterSql('only', 't', 'w."organization_id"')).toMatch(/^coalesce\(/);
    expect(spamFilterSql('exclude', 't', 'w."organization_id"')).toMatch(/^not coalesce\(/);
  });

  it('refuses anything but a plain alias or column reference', () => {
    expect(() => spamFilterSql('only', 't; drop table token', 'w."organization_id"')).toThrow(/unsafe/);
    expect(() => spamFilterSql('only', 't', 'w.organization_id or true')).toThrow(/unsafe/);
    expect(() => tokenSpamColumnSql('T')).toThrow(/unsafe/);
  });

  it('reads the spam column back as the view an organization sees', () => {
    expect(spamViewFromColumn(null)).toBeNull();
    expect(spamViewFromColumn({ rules: null, override: null })).toEqual({ isSpam: false, reasons: [], source: 'rules' });
    expect(spamViewFromColumn('{"rules":{"massAirdrop":true,"lureMetadata":false},"override":null}')).toEqual({
      isSpam: true,
      reasons: ['massAirdrop'],
      source: 'rules',
    });
    expect(spamViewFromColumn({ rules: { massAirdrop: true, lureMetadata: true }, override: false })).toEqual({
      isSpam: false,
      reasons: ['massAirdrop', 'lureMetadata'],
      source: 'organization',
    });
  });

  it('reads a contract profile back, null until read', () => {
    expect(contractProfileFromColumn(null)).toEqual({ name: null, symbol: null });
    expect(contractProfileFromColumn({ name: 'Kittens', symbol: null })).toEqual({ name: 'Kittens', symbol: null });
  });
});
