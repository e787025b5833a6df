import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM with a fresh random 96-bit IV per seal and a full 128-bit tag,
 * stored as one text value `v1.<iv>.<tag>.<ciphertext>` (standard base64). The version prefix
 * leaves room to change algorithm or key later without guessing what an old value is.
 *
 * An optional context (e.g. the owning organization's id) is bound as additional authenticated
 * data, so a sealed value copied to another row does not open there.
 */
const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Never carries the secret or the key in its message. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export function sealSecret(plain: string, key: Buffer, context = ''): string {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64'), tag.toString('base64'), ciphertext.toString('base64')].join('.');
}

/** Opens a value made by {@link sealSecret}; throws {@link SecretBoxError} unless it authenticates. */
export function openSecret(sealed: string, key: Buffer, context = ''): string {
  assertKey(key);
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION || !parts.slice(1).every((part) => BASE64.test(part))) {
    throw new SecretBoxError('The value is not a sealed secret of a known version.');
  }
  const iv = Buffer.from(parts[1], 'base64');
  const tag = Buffer.from(parts[2], 'base64');
  const ciphertext = Buffer.from(parts[3], 'base64');
  // GCM would accept a shortened tag, which is easier to forge: insist on the full length.
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new SecretBoxError('The sealed secret is malformed.');
  }
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('The sealed secret does not authenticate: wrong key or altered value.');
  }
}

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
    throw new SecretBoxError(`The encryption key must be ${KEY_BYTES} bytes.`);
  }
}
