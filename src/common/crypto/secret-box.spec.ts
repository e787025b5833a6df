import { createCipheriv, randomBytes } from 'node:crypto';
import type { SecretKeyring } from '../../config/secrets-config';
import { needsReseal, openSecret, resealSecret, sealedKeyId, sealSecret, SecretBoxError } from './secret-box';

/** A one-key ring. */
function singleKeyring(key: Buffer, id = 'default'): SecretKeyring {
  const entry = { id, key };
  return { sealing: entry, keys: [entry] };
}

const key = singleKeyring(randomBytes(32), 'k1');
const other = () => singleKeyring(randomBytes(32), 'k1');

/** The format written before keys had ids: v1.<iv>.<tag>.<ciphertext>, made here independently. */
function legacySeal(plain: string, raw: Buffer, context = ''): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', raw, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join('.');
}
const secret = 'whsec-Ünïcode-✓-0123456789abcdef';

/** Flips one bit of the decoded bytes of part `index` of a sealed value. */
function flipBit(sealed: string, index: number): string {
  index += 1; // parts after the key id
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index], 'base64');
  bytes[bytes.length - 1] ^= 0x01;
  parts[index] = bytes.toString('base64');
  return parts.join('.');
}

describe('secret box (AES-256-GCM)', () => {
  it('round-trips a secret', () => {
    expect(openSecret(sealSecret(secret, key), key)).toBe(secret);
    expect(openSecret(sealSecret('', key), key)).toBe('');
  });

  it('stores one text value v2.<keyId>.<iv>.<tag>.<ciphertext> with a 12-byte IV and a 16-byte tag', () => {
    const sealed = sealSecret(secret, key);
    const [version, keyId, iv, tag, ciphertext] = sealed.split('.');
    expect(version).toBe('v2');
    expect(keyId).toBe('k1');
    expect(Buffer.from(iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(tag, 'base64')).toHaveLength(16);
    expect(Buffer.from(ciphertext, 'base64')).toHaveLength(Buffer.byteLength(secret));
  });

  it('never contains the secret in clear, in base64 or in hex', () => {
    const sealed = sealSecret(secret, key);
    expect(sealed).not.toContain(secret);
    expect(sealed).not.toContain(Buffer.from(secret).toString('base64').slice(0, 12));
    expect(sealed).not.toContain(Buffer.from(secret).toString('hex').slice(0, 12));
  });

  it('uses a fresh IV for every seal, so equal secrets give different values', () => {
    const values = new Set(Array.from({ length: 50 }, () => sealSecret(secret, key)));
    expect(values.size).toBe(50);
    const ivs = new Set([...values].map((v) => v.split('.')[2]));
    expect(ivs.size).toBe(50);
  });

  it.each([
    ['the ciphertext', 3],
    ['the tag', 2],
    ['the IV', 1],
  ])('detects tampering with %s', (_, index) => {
    const sealed = sealSecret(secret, key);
    expect(() => openSecret(flipBit(sealed, index), key)).toThrow(SecretBoxError);
  });

  it('refuses a shortened tag', () => {
    const parts = sealSecret(secret, key).split('.');
    parts[3] = Buffer.from(parts[3], 'base64').subarray(0, 12).toString('base64');
    expect(() => openSecret(parts.join('.'), key)).toThrow(SecretBoxError);
  });

  it('refuses the wrong key', () => {
    const sealed = sealSecret(secret, key);
    expect(() => openSecret(sealed, other())).toThrow(/wrong key or altered value/);
  });

  it('binds the context: a value sealed for one organization does not open for another', () => {
    const sealed = sealSecret(secret, key, 'org-a');
    expect(openSecret(sealed, key, 'org-a')).toBe(secret);
    expect(() => openSecret(sealed, key, 'org-b')).toThrow(SecretBoxError);
    expect(() => openSecret(sealed, key)).toThrow(SecretBoxError);
  });

  it.each([
    '',
    'plain-text',
    'v3.k1.AAAA.AAAA.AAAA',
    'v2.AAAA.AAAA.AAAA',
    'v1.AAAA.AAAA',
    'v1.!!!.AAAA.AAAA',
    'v1.a.b.c.d',
    'v2.a b.AAAA.AAAA.AAAA',
  ])('refuses a value that is not a sealed secret: %p', (value) => {
    expect(() => openSecret(value, key)).toThrow(SecretBoxError);
  });

  it('refuses keys that are not 32 bytes, without echoing them', () => {
    expect(() => sealSecret(secret, singleKeyring(randomBytes(16)))).toThrow(/32 bytes/);
    expect(() => openSecret(sealSecret(secret, key), singleKeyring(Buffer.alloc(31), 'k1'))).toThrow(/32 bytes/);
  });

  it('never puts the secret in an error message', () => {
    const sealed = sealSecret(secret, key);
    try {
      openSecret(flipBit(sealed, 3), key);
      throw new Error('expected openSecret to throw');
    } catch (error) {
      expect(error).toBeInstanceOf(SecretBoxError);
      expect(String((error as Error).message)).not.toContain(secret);
    }
  });
});

describe('secret box key rotation', () => {
  const a = { id: 'a', key: randomBytes(32) };
  const b = { id: 'b', key: randomBytes(32) };
  const ringA = { sealing: a, keys: [a] };
  const ringBA = { sealing: b, keys: [b, a] };
  const ringB = { sealing: b, keys: [b] };

  it('seals with the first key and names it; opens with any key of the ring', () => {
    const old = sealSecret(secret, ringA, 'org');
    expect(sealedKeyId(old)).toBe('a');
    expect(openSecret(old, ringBA, 'org')).toBe(secret);
    const fresh = sealSecret(secret, ringBA, 'org');
    expect(sealedKeyId(fresh)).toBe('b');
    expect(openSecret(fresh, ringBA, 'org')).toBe(secret);
  });

  it('re-seals a value with the current key, after which the old key can go', () => {
    const old = sealSecret(secret, ringA, 'org');
    expect(needsReseal(old, ringBA)).toBe(true);
    expect(() => openSecret(old, ringB, 'org')).toThrow(/sealed with key "a", which is not in the configured keyring/);
    const resealed = resealSecret(old, ringBA, 'org');
    expect(needsReseal(resealed, ringBA)).toBe(false);
    expect(openSecret(resealed, ringB, 'org')).toBe(secret);
  });

  it('opens a key renamed in the configuration', () => {
    const sealed = sealSecret(secret, ringA);
    expect(openSecret(sealed, singleKeyring(a.key, 'renamed'))).toBe(secret);
  });

  it('still opens values sealed before keys had ids (v1), with whichever key of the ring sealed them', () => {
    const legacy = legacySeal(secret, a.key, 'org');
    expect(sealedKeyId(legacy)).toBeNull();
    expect(openSecret(legacy, ringBA, 'org')).toBe(secret);
    expect(needsReseal(legacy, ringA)).toBe(true);
    expect(() => openSecret(legacy, ringB, 'org')).toThrow(SecretBoxError);
    expect(() => openSecret(legacy, ringBA, 'other-org')).toThrow(SecretBoxError);
  });
});
