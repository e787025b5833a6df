import { createPrivateKey, generateKeyPairSync, KeyObject } from 'node:crypto';

/**
 * Asymmetric signing (Standard Webhooks `v1a`): an endpoint may hold an Ed25519 key pair beside
 * its shared secret, so a receiver verifies with a public key and never holds anything that can
 * sign. The private half is kept as PKCS#8 DER in base64 (sealed by the caller); the public half
 * as the raw 32 bytes in base64, shown as `whpk_<base64>`.
 */
export interface SigningKeyPair {
  /** PKCS#8 DER, base64: a secret, to be sealed before it is stored. */
  privateKey: string;
  /** The raw 32-byte Ed25519 public key, base64. */
  publicKey: string;
}

/** The prefix that tells an Ed25519 public key apart from a `whsec_` secret. */
export const PUBLIC_KEY_PREFIX = 'whpk_';

/** A fresh Ed25519 key pair. */
export function generateSigningKeyPair(): SigningKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    publicKey: rawPublicKey(publicKey).toString('base64'),
  };
}

/** The raw 32 bytes of an Ed25519 public key (its JWK `x`). */
function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url');
}

/** Opens a stored private key (PKCS#8 DER, base64) for signing. */
export function signingKeyFromStored(privateKey: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(privateKey, 'base64'), format: 'der', type: 'pkcs8' });
}

/** How the API shows a stored public key; null when there is none. */
export function publicKeyLabel(publicKey: string | null): string | null {
  return publicKey === null ? null : `${PUBLIC_KEY_PREFIX}${publicKey}`;
}

/** The key pairs of one endpoint, each private half standing for its sealed value. */
export interface SigningKeySlots {
  privateKey: string | null;
  publicKey: string | null;
  previousPrivateKey: string | null;
  previousPublicKey: string | null;
}

export const NO_SIGNING_KEYS: SigningKeySlots = { privateKey: null, publicKey: null, previousPrivateKey: null, previousPublicKey: null };

/**
 * The slots after `signing: {asymmetric}` is set: switching it on keeps a pair already there
 * (so receivers keep their public key) or takes `fresh`; switching it off drops every pair.
 */
export function signingSlotsAfterSwitch(
  slots: SigningKeySlots,
  asymmetric: boolean,
  fresh: () => { privateKey: string; publicKey: string },
): SigningKeySlots {
  if (!asymmetric) return NO_SIGNING_KEYS;
  if (slots.privateKey !== null) return slots;
  return { ...fresh(), previousPrivateKey: null, previousPublicKey: null };
}

/**
 * The slots after a rotation of the endpoint's secret: an endpoint that signs asymmetrically gets
 * `next` too, and its current pair keeps signing beside it while the previous secret does (`keep`).
 */
export function rotateSigningSlots(
  slots: SigningKeySlots,
  next: { privateKey: string; publicKey: string },
  keep: boolean,
): SigningKeySlots {
  if (slots.privateKey === null) return NO_SIGNING_KEYS;
  return {
    ...next,
    previousPrivateKey: keep ? slots.privateKey : null,
    previousPublicKey: keep ? slots.publicKey : null,
  };
}

/** A secret replaced at once (PATCH) ends any overlap: the previous pair goes with the previous secret. */
export function dropPreviousSigningKeys(slots: SigningKeySlots): SigningKeySlots {
  return { ...slots, previousPrivateKey: null, previousPublicKey: null };
}
