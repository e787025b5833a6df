import { createHmac, KeyObject, sign } from 'node:crypto';

/** The secrets that may sign one attempt: the current one, and a previous one until it expires. */
export interface SigningSecrets {
  secret: string;
  /** The secret replaced by a rotation, with the instant it stops signing; absent when none. */
  previous?: { secret: string; expiresAt: Date } | null;
  /** Ed25519 keys adding `v1a` entries (the previous one until it expires); absent or null when the endpoint has none. */
  signingKeys?: { current: KeyObject; previous: { key: KeyObject; expiresAt: Date } | null } | null;
}

/** Every signature header of one attempt (README.md, "Verifying a webhook"). */
export interface WebhookSignatureHeaders {
  /** `x-service-webhook-hmac`: Base64(HMAC-SHA256(secret, body)), with the current secret. */
  'x-service-webhook-hmac': string;
  /** The same with the previous secret, only while a rotation's overlap lasts. */
  'x-service-webhook-hmac-previous'?: string;
  /** Standard Webhooks v1, one entry per signing secret (docs/WEBHOOKS.md "Rotating the shared secret"). */
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Base64(HMAC-SHA256(sharedSecret, body)), the value of x-service-webhook-hmac (README.md, "Verifying a webhook"). */
export function signWebhookBody(sharedSecret: string, body: string | Buffer): string {
  return createHmac('sha256', sharedSecret).update(body).digest('base64');
}

/**
 * Standard Webhooks' signature: Base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")), where the
 * key is the UTF-8 bytes of the shared secret, so a receiver's library takes
 * `whsec_` + Base64(UTF-8 secret).
 */
export function standardWebhookSignature(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

/** Standard Webhooks' asymmetric signature: Base64(Ed25519(privateKey, "{id}.{timestamp}.{body}")). */
export function standardWebhookAsymmetricSignature(privateKey: KeyObject, id: string, timestamp: number, body: string | Buffer): string {
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8')]);
  return sign(null, content, privateKey).toString('base64');
}

/** Whether the previous secret still signs an attempt signed at `now` (strictly before its expiry). */
export function previousSecretApplies(previous: SigningSecrets['previous'], now: Date): previous is { secret: string; expiresAt: Date } {
  return previous !== undefined && previous !== null && now.getTime() < previous.expiresAt.getTime();
}

/**
 * The signature headers of one attempt signed at `now`. Every attempt is signed afresh (its own
 * timestamp, the secrets as they are at that moment), so a retry or redelivery after a rotation
 * verifies with the new secret. While the previous secret is valid, it signs too: a receiver that
 * knows either secret verifies; the new secret's entry comes first.
 */
export function webhookSignatureHeaders(id: string, body: string | Buffer, secrets: SigningSecrets, now: Date): WebhookSignatureHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signing = [secrets.secret];
  const previous = previousSecretApplies(secrets.previous, now) ? secrets.previous.secret : null;
  if (previous !== null) signing.push(previous);
  const entries = signing.map((secret) => `v1,${standardWebhookSignature(secret, id, timestamp, body)}`);
  // The same order for the key pairs: the current one first, the replaced one only while it is valid.
  const keys = secrets.signingKeys;
  if (keys) {
    entries.push(`v1a,${standardWebhookAsymmetricSignature(keys.current, id, timestamp, body)}`);
    if (keys.previous && now.getTime() < keys.previous.expiresAt.getTime()) {
      entries.push(`v1a,${standardWebhookAsymmetricSignature(keys.previous.key, id, timestamp, body)}`);
    }
  }
  const headers: WebhookSignatureHeaders = {
    'x-service-webhook-hmac': signWebhookBody(secrets.secret, body),
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': entries.join(' '),
  };
  if (previous !== null) headers['x-service-webhook-hmac-previous'] = signWebhookBody(previous, body);
  return headers;
}
