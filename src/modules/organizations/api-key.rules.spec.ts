import { generateApiKey, hashApiKey, isWellFormedApiKey, normalizeRoles } from './api-key.rules';

describe('API key rules', () => {
  it('makes keys with 256 bits of randomness, a visible prefix and a SHA-256 hash', () => {
    const { key, keyPrefix, keyHash } = generateApiKey();
    expect(key).toMatch(/^nftw_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(keyPrefix)).toBe(true);
    expect(keyPrefix).toHaveLength(13);
    expect(keyHash).toBe(hashApiKey(key));
    expect(keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(keyHash).not.toContain(key.slice(5));
  });

  it('never makes the same key twice', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey().key));
    expect(keys.size).toBe(1000);
  });

  it('orders and deduplicates roles', () => {
    expect(normalizeRoles(['admin', 'read', 'read'])).toEqual(['read', 'admin']);
  });
});

describe('API key shape', () => {
  it('accepts what generateApiKey makes and nothing that it cannot make', () => {
    for (let i = 0; i < 100; i += 1) expect(isWellFormedApiKey(generateApiKey().key)).toBe(true);
    for (const junk of [
      '',
      'nftw_',
      'made-up-key-0123456789',
      `nftw_${'A'.repeat(42)}`,
      `nftw_${'A'.repeat(44)}`,
      `nftw_${'A'.repeat(42)}=`,
      `NFTW_${'A'.repeat(43)}`,
    ]) {
      expect(isWellFormedApiKey(junk)).toBe(false);
    }
  });
});
