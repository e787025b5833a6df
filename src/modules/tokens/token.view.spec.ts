import { tokenColumnsSql, tokenJoinSql, tokenViewFromRow } from './token.view';

describe('token rows', () => {
  it('selects every column under a prefix and reads it back', () => {
    const sql = tokenColumnsSql('t', 'tk_');
    expect(sql).toContain('t."contract_address" as "tk_contractAddress"');
    expect(sql).toContain('t."creator_external_page_url" as "tk_creatorExternalPageUrl"');
    // Eighteen columns, the media and the spam classification (sub-selects, themselves holding commas).
    expect(sql.match(/ as "tk_[A-Za-z]+"/g)).toHaveLength(20);
    expect(sql).toContain(' as "tk_media"');
    expect(sql).toContain(' as "tk_spam"');

    const view = tokenViewFromRow(
      {
        tk_id: 'a',
        tk_organizationId: 'o',
        tk_contractAddress: '0xabc',
        tk_blockchainTokenId: '42',
        tk_chainId: '31337',
        tk_metadataStatus: 'pending',
        tk_metadataError: null,
        tk_name: 'N',
        tk_editionId: '7',
        tk_totalEdition: null,
        tk_spam: { rules: { massAirdrop: true, lureMetadata: false }, override: null },
      },
      'tk_',
    );
    expect(view).toEqual({
      id: 'a',
      organizationId: 'o',
      contractAddress: '0xabc',
      blockchainTokenId: '42',
      chainId: 31337,
      metadataStatus: 'pending',
      metadataError: null,
      name: 'N',
      description: null,
      image: null,
      media: { status: 'none', contentType: null, error: null, height: null, sha256: null, width: null },
      spam: { isSpam: true, reasons: ['massAirdrop'], source: 'rules' },
      animationUrl: null,
      externalUrl: null,
      backgroundColor: null,
      editionId: 7,
      totalEdition: null,
      creatorName: null,
      creatorImageUrl: null,
      creatorExternalPageUrl: null,
    });
  });

  it('refuses identifiers that could inject SQL', () => {
    expect(() => tokenColumnsSql('t; drop table token', 'p_')).toThrow();
    expect(() => tokenColumnsSql('t', 'p"')).toThrow();
    expect(() => tokenJoinSql('t', 'b."token_id"; delete from token', 'b."organization_id"')).toThrow();
    expect(() => tokenJoinSql('t', 'b."token_id"', '1 = 1 or b."organization_id"')).toThrow();
  });

  it("joins a caller's row to its token by primary key within the row's organization", () => {
    expect(tokenJoinSql('t', 'b."token_id"', 'b."organization_id"')).toBe(
      'join "token" t on t."id" = b."token_id" and t."organization_id" = b."organization_id"',
    );
  });
});
