import { randomBytes } from 'node:crypto';
import { openSecret, sealSecret, SecretBoxError } from './secret-box';

const key = randomBytes(32);
const secret = 'whsec-Ünïcode-✓-0123456789abcdef';

/** Flips one bit of the decoded bytes of part `index` of a sealed value. */
function flipBit(sealed: string, index: number): string {
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

  it('stores one text value v1.<iv>.<tag>.<ciphertext> with a 12-byte IV and a 16-byte tag', () => {
    const sealed = sealSecret(secret, key);
    const [version, iv, tag, ciphertext] = sealed.split('.');
    expect(version).toBe('v1');
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
    const ivs = new Set([...values].map((v) => v.split('.')[1]));
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
    parts[2] = Buffer.from(parts[2], 'base64').subarray(0, 12).toString('base64');
    expect(() => openSecret(parts.join('.'), key)).toThrow(SecretBoxError);
  });

  it('refuses the wrong key', () => {
    const sealed = sealSecret(secret, key);
    expect(() => openSecret(sealed, randomBytes(32))).toThrow(/wrong key or altered value/);
  });

  it('binds the context: a value sealed for one organization does not open for another', () => {
    const sealed = sealSecret(secret, key, 'org-a');
    expect(openSecret(sealed, key, 'org-a')).toBe(secret);
    expect(() => openSecret(sealed, key, 'org-b')).toThrow(SecretBoxError);
    expect(() => openSecret(sealed, key)).toThrow(SecretBoxError);
  });

  it.each(['', 'plain-text', 'v2.AAAA.AAAA.AAAA', 'v1.AAAA.AAAA', 'v1.!!!.AAAA.AAAA', 'v1.a.b.c.d'])(
    'refuses a value that is not a sealed secret: %p',
    (value) => {
      expect(() => openSecret(value, key)).toThrow(SecretBoxError);
    },
  );

  it('refuses keys that are not 32 bytes, without echoing them', () => {
    expect(() => sealSecret(secret, randomBytes(16))).toThrow(/32 bytes/);
    expect(() => openSecret(sealSecret(secret, key), Buffer.alloc(31))).toThrow(/32 bytes/);
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
