import { loadConfig as load } from './app-config';

const loadConfig = (env: Record<string, string | undefined>) => load({ NODE_ENV: 'development', ...env });

describe('secrets keyring configuration', () => {
  it('reads an ordered keyring: the first key seals, all open; the single key is a one-key ring', () => {
    const a = Buffer.alloc(32, 1);
    const b = Buffer.alloc(32, 2);
    const ring = loadConfig({ SECRETS_ENCRYPTION_KEYS: `b:${b.toString('base64')}, a:${a.toString('base64')}` }).secretsEncryptionKey;
    expect(ring.sealing.id).toBe('b');
    expect(ring.keys.map((k) => k.id)).toEqual(['b', 'a']);
    expect(ring.keys[1].key.equals(a)).toBe(true);
    const single = loadConfig({ SECRETS_ENCRYPTION_KEY: a.toString('base64') }).secretsEncryptionKey;
    expect(single.keys).toEqual([{ id: 'default', key: a }]);
    expect(() =>
      loadConfig({ SECRETS_ENCRYPTION_KEY: a.toString('base64'), SECRETS_ENCRYPTION_KEYS: `a:${a.toString('base64')}` }),
    ).toThrow(/both set/);
  });
});
