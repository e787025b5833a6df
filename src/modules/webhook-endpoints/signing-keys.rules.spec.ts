import { createPublicKey, sign, verify } from 'node:crypto';
import {
  dropPreviousSigningKeys,
  generateSigningKeyPair,
  NO_SIGNING_KEYS,
  publicKeyLabel,
  rotateSigningSlots,
  signingKeyFromStored,
  signingSlotsAfterSwitch,
} from './signing-keys.rules';

/** The raw 32-byte key as a KeyObject, the way a receiver holding only `whpk_…` would build it. */
function publicKeyFromRaw(raw: string) {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw, 'base64').toString('base64url') }, format: 'jwk' });
}

describe('signing keys', () => {
  it('generates an Ed25519 pair whose raw public key verifies what the stored private key signs', () => {
    const pair = generateSigningKeyPair();
    expect(Buffer.from(pair.publicKey, 'base64')).toHaveLength(32);
    const message = Buffer.from('msg_1.1700000000.{"a":1}');
    const signature = sign(null, message, signingKeyFromStored(pair.privateKey));
    expect(verify(null, message, publicKeyFromRaw(pair.publicKey), signature)).toBe(true);
    expect(publicKeyLabel(pair.publicKey)).toBe(`whpk_${pair.publicKey}`);
    expect(publicKeyLabel(null)).toBeNull();
  });

  const fresh = () => ({ privateKey: 'sealed-new', publicKey: 'pub-new' });
  const current = { privateKey: 'sealed-a', publicKey: 'pub-a', previousPrivateKey: 'sealed-old', previousPublicKey: 'pub-old' };

  it('switching on keeps an existing pair, creates one when there is none; switching off drops every pair', () => {
    expect(signingSlotsAfterSwitch(current, true, fresh)).toEqual(current);
    expect(signingSlotsAfterSwitch(NO_SIGNING_KEYS, true, fresh)).toEqual({
      ...fresh(),
      previousPrivateKey: null,
      previousPublicKey: null,
    });
    expect(signingSlotsAfterSwitch(current, false, fresh)).toEqual(NO_SIGNING_KEYS);
  });

  it('a rotation replaces the pair and keeps the old one for the overlap only when asked', () => {
    expect(rotateSigningSlots(current, fresh(), true)).toEqual({ ...fresh(), previousPrivateKey: 'sealed-a', previousPublicKey: 'pub-a' });
    expect(rotateSigningSlots(current, fresh(), false)).toEqual({ ...fresh(), previousPrivateKey: null, previousPublicKey: null });
    expect(rotateSigningSlots(NO_SIGNING_KEYS, fresh(), true)).toEqual(NO_SIGNING_KEYS);
    expect(dropPreviousSigningKeys(current)).toEqual({ ...current, previousPrivateKey: null, previousPublicKey: null });
  });
});
