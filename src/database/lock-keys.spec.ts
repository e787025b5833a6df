import { LOCK_KEYS, LOCK_NAMES } from './lock-keys';

describe('advisory lock keys', () => {
  it('keep their values, which processes of two versions share during an upgrade', () => {
    expect(LOCK_KEYS).toEqual({
      migrations: 7_341_002,
      idempotencyPurge: 7_341_015,
      auditPrune: 7_341_017,
      webhookReconcile: 1_852_208_247,
    });
    expect(LOCK_NAMES.walletSync('org-1')).toBe('wallet_sync:org-1');
    expect(LOCK_NAMES.contractIndex('org-1')).toBe('contract_index:org-1');
  });

  it('are distinct', () => {
    const keys = Object.values(LOCK_KEYS);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
