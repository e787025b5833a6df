import { createHmac } from 'node:crypto';
import { bearer, TestOrganization } from './factories';
import type { ReceivedWebhook } from './receiver';
import type { HttpTarget } from './test-app';

export const CONFIG_PATH = '/api/organization/v1/current-organization/webhook-config';
export const WEBHOOKS_PATH = '/api/organization/v1/current-organization/webhooks';
export const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';

/** An endpoint a suite added, with the secret it was given (so the suite can verify signatures). */
export interface AddedEndpoint {
  id: string;
  url: string;
  secret: string;
}

let endpointSecrets = 0;

/** Adds an endpoint at `url` with a secret of its own; `body` adds or overrides any field. */
export async function addEndpoint(t: HttpTarget, org: TestOrganization, url: string, body: object = {}): Promise<AddedEndpoint> {
  endpointSecrets += 1;
  const secret = `endpoint-secret-${endpointSecrets}-0123456789`;
  const res = await t
    .http()
    .post(ENDPOINTS_PATH)
    .set(bearer(org.adminKey))
    .send({ url, sharedSecret: secret, ...body })
    .expect(201);
  return { id: res.body.id, url, secret };
}

export async function configureWebhooks(
  t: HttpTarget,
  org: TestOrganization,
  config: { url: string; sharedSecret: string; webhookTypes?: string[]; enabled?: boolean },
): Promise<void> {
  await t
    .http()
    .patch(CONFIG_PATH)
    .set(bearer(org.adminKey))
    .send({
      url: config.url,
      sharedSecret: config.sharedSecret,
      webhookTypes: config.webhookTypes ?? ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'],
      enabled: config.enabled ?? true,
    })
    .expect(200);
}

export async function createWallet(t: HttpTarget, org: TestOrganization, name = 'wallet'): Promise<string> {
  const res = await t.http().post('/v1/wallets').set(bearer(org.adminKey)).send({ name }).expect(201);
  return res.body.id;
}

/**
 * The receiver's side of the legacy `x-service-webhook-hmac` check (README.md "Verifying a
 * webhook"), written independently of the service's signer.
 */
export function signatureIsValid(webhook: ReceivedWebhook, sharedSecret: string): boolean {
  const expected = createHmac('sha256', sharedSecret).update(webhook.raw).digest('base64');
  return webhook.headers['x-service-webhook-hmac'] === expected;
}

/** Webhook ids received per resource: what "nothing lost" and "exactly once" are counted on. */
export function idsByResource(received: ReceivedWebhook[]): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const w of received) {
    const resourceId = String(w.body.resourceId);
    if (!map.has(resourceId)) map.set(resourceId, new Set());
    map.get(resourceId)!.add(String(w.body.id));
  }
  return map;
}

/** The organization's delivery log, first 1,000 entries, as the API shows it. */
export async function deliveryLog(t: HttpTarget, org: TestOrganization) {
  const res = await t.http().get(`${WEBHOOKS_PATH}?pageSize=1000`).set(bearer(org.adminKey)).expect(200);
  return res.body.webhooks as { id: string; resourceId: string; status: string; attemptCount: number }[];
}
