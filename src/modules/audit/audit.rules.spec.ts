import { diffForAudit, REDACTED } from './audit.rules';

describe('diffForAudit', () => {
  it('lists only the fields that changed', () => {
    expect(diffForAudit({ enabled: false, url: 'a' }, { enabled: true, url: 'a' })).toEqual({
      enabled: { from: false, to: true },
    });
  });

  it('compares arrays by value', () => {
    expect(diffForAudit({ types: ['nft'] }, { types: ['nft'] })).toEqual({});
    expect(diffForAudit({ types: ['nft'] }, { types: ['nft', 'kyc'] })).toEqual({
      types: { from: ['nft'], to: ['nft', 'kyc'] },
    });
  });

  it('never shows a secret value, only that it changed', () => {
    const changes = diffForAudit({ sharedSecret: 'old-secret-value' }, { sharedSecret: 'new-secret-value' }, ['sharedSecret']);
    expect(changes).toEqual({ sharedSecret: { from: REDACTED, to: REDACTED } });
    expect(JSON.stringify(changes)).not.toContain('secret-value');
  });

  it('shows a secret being set for the first time as null to redacted', () => {
    expect(diffForAudit({ sharedSecret: null }, { sharedSecret: 'x'.repeat(16) }, ['sharedSecret'])).toEqual({
      sharedSecret: { from: null, to: REDACTED },
    });
  });
});
