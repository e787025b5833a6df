import { Fail, key32, Parsed, variable } from './variables';

/** One encryption key of the keyring, named so that a sealed value can say which key sealed it. */
export interface SecretKey {
  readonly id: string;
  readonly key: Buffer;
}

/** Keys for secrets at rest: the first seals, every one opens (so keys can be rotated). */
export interface SecretKeyring {
  readonly sealing: SecretKey;
  readonly keys: readonly SecretKey[];
}

/** Fixed key so a development machine runs without set-up; refused when NODE_ENV=production. */
const DEVELOPMENT_ENCRYPTION_KEY = Buffer.alloc(32, 'nft-wallet-development-key-32byt');
const DEVELOPMENT_KEY_ID = 'dev';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** SECRETS_ENCRYPTION_KEYS, or SECRETS_ENCRYPTION_KEY as a one-key ring; production refuses the development key. */
export const secretsVariables = (production: boolean) => {
  // The development key is published in this repository: production refuses it anywhere.
  const sealingKey = (t: string, fail: Fail) => {
    const key = key32(t);
    if (!key) return fail('must hold keys of 32 bytes encoded in base64');
    return production && key.equals(DEVELOPMENT_ENCRYPTION_KEY) ? fail('must not use the development key when NODE_ENV=production') : key;
  };
  return {
    SECRETS_ENCRYPTION_KEY: variable<Buffer | null>(null, sealingKey),
    // `id:base64key,...`: the first seals, every one opens.
    SECRETS_ENCRYPTION_KEYS: variable<SecretKey[] | null>(null, (t, fail) => {
      const keys: SecretKey[] = [];
      for (const entry of t.split(',').map((e) => e.trim())) {
        const colon = entry.indexOf(':');
        const id = colon > 0 ? entry.slice(0, colon) : '';
        if (!KEY_ID.test(id)) return fail('must be a comma-separated list of id:base64key (ids of 1-32 letters, digits, _ or -)');
        if (keys.some((k) => k.id === id)) return fail(`names the key id "${id}" twice`);
        const key = sealingKey(entry.slice(colon + 1), fail);
        if (!key) return null;
        keys.push({ id, key });
      }
      return keys;
    }),
  };
};

/** The keyring: the listed keys, the single key, or (development only, unset) the development key. */
export function secretKeyring(e: Parsed<ReturnType<typeof secretsVariables>>): SecretKeyring {
  const keys =
    e.SECRETS_ENCRYPTION_KEYS ??
    (e.SECRETS_ENCRYPTION_KEY
      ? [{ id: 'default', key: e.SECRETS_ENCRYPTION_KEY }]
      : [{ id: DEVELOPMENT_KEY_ID, key: DEVELOPMENT_ENCRYPTION_KEY }]);
  return { sealing: keys[0], keys };
}
