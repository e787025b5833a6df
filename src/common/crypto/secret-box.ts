import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretKey, SecretKeyring } from '../../config/secrets-config';

/**
 * Secrets at rest: AES-256-GCM with a fresh random 96-bit IV per seal and a full 128-bit tag,
 * stored as one text value `v2.<keyId>.<iv>.<tag>.<ciphertext>` (standard base64). The key id
 * says which key of the keyring sealed it, so keys can be rotated: the keyring's first key seals,
 * every key opens, and `secrets:reseal` moves old values to the current key. Values of the
 * earlier format `v1.<iv>.<tag>.<ciphertext>` (no key id) still open: every key is tried, which
 * is safe because GCM authenticates.
 *
 * An optional context (e.g. the owning organization's id) is bound as additional authenticated
 * data, so a sealed value copied to another row does not open there.
 */
const VERSION = 'v2';
const LEGACY_VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** Never carries the secret or the key in its message. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export function sealSecret(plain: string, keyring: SecretKeyring, context = ''): string {
  const { id, key } = keyring.sealing;
  assertKey(key);
  if (!KEY_ID.test(id)) throw new SecretBoxError('The key id must be 1-32 letters, digits, _ or -.');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, id, iv.toString('base64'), tag.toString('base64'), ciphertext.toString('base64')].join('.');
}

/**
 * Opens a value made by {@link sealSecret} (or by the earlier v1 format) with the keyring;
 * throws {@link SecretBoxError} unless it authenticates under one of its keys.
 */
export function openSecret(sealed: string, keyring: SecretKeyring, context = ''): string {
  const parsed = parseSealed(sealed);
  let candidates: readonly SecretKey[] = keyring.keys;
  if (parsed.keyId !== null) {
    const named = keyring.keys.find((k) => k.id === parsed.keyId);
    // A key renamed in the configuration still opens its values: GCM tells the right key apart.
    if (named) candidates = [named, ...keyring.keys.filter((k) => k !== named)];
  }
  for (const { key } of candidates) {
    assertKey(key);
    const plain = tryOpen(parsed, key, context);
    if (plain !== null) return plain;
  }
  throw new SecretBoxError(
    parsed.keyId !== null && !keyring.keys.some((k) => k.id === parsed.keyId)
      ? `The sealed secret was sealed with key "${parsed.keyId}", which is not in the configured keyring.`
      : 'The sealed secret does not authenticate: wrong key or altered value.',
  );
}

/** The id of the key that sealed `sealed`; null for a v1 value, which does not say. */
export function sealedKeyId(sealed: string): string | null {
  return parseSealed(sealed).keyId;
}

/** True when `sealed` is not yet sealed with the keyring's current key. */
export function needsReseal(sealed: string, keyring: SecretKeyring): boolean {
  return sealedKeyId(sealed) !== keyring.sealing.id;
}

/** Opens with any key of the ring and seals again with the current one. */
export function resealSecret(sealed: string, keyring: SecretKeyring, context = ''): string {
  return sealSecret(openSecret(sealed, keyring, context), keyring, context);
}

interface ParsedSealed {
  keyId: string | null;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

function parseSealed(sealed: string): ParsedSealed {
  const parts = sealed.split('.');
  let keyId: string | null;
  let encoded: string[];
  if (parts.length === 5 && parts[0] === VERSION && KEY_ID.test(parts[1])) {
    keyId = parts[1];
    encoded = parts.slice(2);
  } else if (parts.length === 4 && parts[0] === LEGACY_VERSION) {
    keyId = null;
    encoded = parts.slice(1);
  } else {
    throw new SecretBoxError('The value is not a sealed secret of a known version.');
  }
  if (!encoded.every((part) => BASE64.test(part))) {
    throw new SecretBoxError('The value is not a sealed secret of a known version.');
  }
  const [iv, tag, ciphertext] = encoded.map((part) => Buffer.from(part, 'base64'));
  // GCM would accept a shortened tag, which is easier to forge: insist on the full length.
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new SecretBoxError('The sealed secret is malformed.');
  }
  return { keyId, iv, tag, ciphertext };
}

function tryOpen(parsed: ParsedSealed, key: Buffer, context: string): string | null {
  try {
    const decipher = createDecipheriv(ALGORITHM, key, parsed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(parsed.tag);
    return Buffer.concat([decipher.update(parsed.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
    throw new SecretBoxError(`The encryption key must be ${KEY_BYTES} bytes.`);
  }
}
