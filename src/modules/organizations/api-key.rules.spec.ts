import { generateApiKey, hashApiKey, normalizeRoles } from './api-key.rules';

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
