import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { WebhookEndpointsService } from '../src/modules/webhook-endpoints/webhook-endpoints.service';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { CONFIG_PATH, configureWebhooks, createWallet, signatureIsValid, WEBHOOKS_PATH } from './support/webhooks';

const ROTATE_PATH = `${CONFIG_PATH}/rotate-secret`;
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const OLD_SECRET = 'rotation-old-shared-secret-01';
const NEW_SECRET = 'rotation-new-shared-secret-02';

/** How a receiver using the Standard Webhooks library is given the secret (README.md shows this). */
const whsec = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;

/** Verification with the maintained `standardwebhooks` package, as an integrator would do it. */
function standardVerifies(webhook: ReceivedWebhook, secret: string): boolean {
  try {
    new Webhook(whsec(secret)).verify(webhook.raw.toString('utf8'), webhook.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/** The legacy header with the previous secret, written independently of the service's signer. */
function previousSeedHeaderValid(webhook: ReceivedWebhook, secret: string): boolean {
  return signatureIsValid(
    { ...webhook, headers: { 'x-service-webhook-hmac': webhook.headers['x-service-webhook-hmac-previous'] } },
    secret,
  );
}

describe('Standard Webhooks signatures and secret rotation', () => {
  let t: TestApp;
  let receiver: TestReceiver;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms', WEBHOOK_SECRET_CLEANUP_INTERVAL: '500ms' });
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(async () => {
    receiver = await new TestReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });

  const configRow = async (org: TestOrganization) =>
    (
      await t.app
        .get(MikroORM)
        .em.getConnection()
        .execute(
          `select shared_secret_sealed, previous_shared_secret_sealed, previous_secret_expires_at from webhook_endpoint where id = ?`,
          [org.id],
        )
    )[0];

  it('signs every attempt and every redelivery afresh with both schemes', async () => {
    const org = await createOrganization(t);
    // Fails twice, then accepts: three attempts of one webhook.
    receiver.behaviour = (n) => ({ status: n <= 2 ? 503 : 200 });
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: OLD_SECRET });
    await createWallet(t, org);
    await receiver.waitFor((r) => r.length >= 3);
    const id = receiver.received[0].body.id as string;
    await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(org.adminKey)),
      (res) => res.body.status === 'succeeded',
    );
    await t.http().post(`${WEBHOOKS_PATH}/${id}/redeliver`).set(bearer(org.adminKey)).expect(202);
    await receiver.waitFor((r) => r.length >= 4);

    expect(receiver.received.map((w) => w.headers['x-service-webhook-attempt'])).toEqual(['1', '2', '3', '4']);
    for (const webhook of receiver.received) {
      expect(webhook.body.id).toBe(id);
      expect(webhook.headers['webhook-id']).toBe(id);
      const signedAt = Number(webhook.headers['webhook-timestamp']);
      expect(String(signedAt)).toBe(webhook.headers['webhook-timestamp']);
      // Signed when sent: within a few seconds of arrival, never in the future.
      expect(signedAt).toBeLessThanOrEqual(Math.floor(webhook.receivedAt / 1000));
      expect(webhook.receivedAt / 1000 - signedAt).toBeLessThan(30);
      expect(webhook.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(webhook.headers['x-service-webhook-hmac-previous']).toBeUndefined();
      expect(standardVerifies(webhook, OLD_SECRET)).toBe(true);
      expect(signatureIsValid(webhook, OLD_SECRET)).toBe(true);
      expect(standardVerifies(webhook, NEW_SECRET)).toBe(false);
      // A tampered body fails the library's check.
      expect(standardVerifies({ ...webhook, raw: Buffer.from(webhook.raw.toString('utf8').replace('create', 'update')) }, OLD_SECRET)).toBe(
        false,
      );
    }
  });

  it('validates the rotation request and changes nothing on a refusal', async () => {
    const org = await createOrganization(t);
    const rotate = (body: unknown) =>
      t
        .http()
        .post(ROTATE_PATH)
        .set(bearer(org.adminKey))
        .send(body as object);

    // No secret yet: there is nothing to rotate.
    expectProblem(await rotate({}), 422, 'WEBHOOK_CONFIG_INCOMPLETE');
    expect((await rotate({})).body.errors).toEqual([{ field: 'sharedSecret', message: expect.any(String) }]);

    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: OLD_SECRET, enabled: false });
    const before = await configRow(org);
    for (const body of [
      { unknown: 1 },
      { sharedSecret: 'too-short' },
      { sharedSecret: 'x'.repeat(257) },
      { sharedSecret: null },
      { sharedSecret: 1234567890123456 },
      { previousSecretValidSeconds: -1 },
      { previousSecretValidSeconds: 604_801 },
      { previousSecretValidSeconds: 1.5 },
      { previousSecretValidSeconds: '60' },
      { previousSecretValidSeconds: null },
    ]) {
      expectProblem(await rotate(body), 400, 'VALIDATION_FAILED');
    }
    expect(await configRow(org)).toEqual(before);

    // Only admins rotate.
    const readKey = await createApiKey(t, org.id, ['read']);
    expectProblem(await t.http().post(ROTATE_PATH).set(bearer(readKey.key)).send({}), 403, 'FORBIDDEN');
    expect(await configRow(org)).toEqual(before);
  });

  it('generates a secret once, seals both at rest, audits redacted, and a PATCH drops the previous secret', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: OLD_SECRET });

    const started = Date.now();
    const res = await t.http().post(ROTATE_PATH).set(bearer(org.adminKey)).send({}).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['previousSecretExpiresAtUtc', 'sharedSecret']);
    const generated: string = res.body.sharedSecret;
    // 32 random bytes in base64url.
    expect(generated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(generated, 'base64url')).toHaveLength(32);
    expect(res.body.previousSecretExpiresAtUtc).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    const expiresAt = new Date(res.body.previousSecretExpiresAtUtc).getTime();
    // The default overlap is a day.
    expect(expiresAt).toBeGreaterThanOrEqual(started + 86_400_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1000);

    const config = await t.http().get(CONFIG_PATH).set(bearer(org.adminKey)).expect(200);
    expect(config.body).toEqual(
      expect.objectContaining({ hasSharedSecret: true, previousSecretExpiresAtUtc: res.body.previousSecretExpiresAtUtc }),
    );
    expect(JSON.stringify(config.body)).not.toContain(generated);

    // Sealed at rest, both of them: neither appears in the table.
    const row = await configRow(org);
    expect(row.shared_secret_sealed).toMatch(/^v2\./);
    expect(row.previous_shared_secret_sealed).toMatch(/^v2\./);
    expect(JSON.stringify(row)).not.toContain(generated);
    expect(JSON.stringify(row)).not.toContain(OLD_SECRET);

    // A given secret is not echoed.
    const given = await t
      .http()
      .post(ROTATE_PATH)
      .set(bearer(org.adminKey))
      .send({ sharedSecret: NEW_SECRET, previousSecretValidSeconds: 60 })
      .expect(200);
    expect(Object.keys(given.body)).toEqual(['previousSecretExpiresAtUtc']);

    const audit = await t.http().get(AUDIT_PATH).set(bearer(org.adminKey)).query({ pageSize: 1000 }).expect(200);
    const rotations = audit.body.entries.filter((e: { action: string }) => e.action === 'webhookConfig.rotateSecret');
    expect(rotations).toHaveLength(2);
    expect(rotations[rotations.length - 1].changes).toEqual({
      sharedSecret: { from: '[redacted]', to: '[redacted]' },
      previousSharedSecret: { from: null, to: '[redacted]' },
      previousSecretExpiresAtUtc: { from: null, to: res.body.previousSecretExpiresAtUtc },
    });
    for (const secret of [generated, OLD_SECRET, NEW_SECRET]) expect(JSON.stringify(audit.body)).not.toContain(secret);
    expect(t.logs.join('\n')).not.toContain(generated);

    // PATCH replaces at once: no previous secret any more, in the answer, at rest, and on the wire.
    const patched = await t
      .http()
      .patch(CONFIG_PATH)
      .set(bearer(org.adminKey))
      .send({ sharedSecret: 'patched-shared-secret-03' })
      .expect(200);
    expect(patched.body.previousSecretExpiresAtUtc).toBeNull();
    expect((await configRow(org)).previous_shared_secret_sealed).toBeNull();
    const afterPatch = await t.http().get(AUDIT_PATH).set(bearer(org.adminKey)).query({ pageSize: 1000 }).expect(200);
    expect(afterPatch.body.entries.find((e: { action: string }) => e.action === 'webhookConfig.update').changes).toEqual(
      expect.objectContaining({
        sharedSecret: { from: '[redacted]', to: '[redacted]' },
        previousSharedSecret: { from: '[redacted]', to: null },
      }),
    );
    await createWallet(t, org);
    const [webhook] = await receiver.waitFor((r) => r.length >= 1);
    expect(webhook.headers['x-service-webhook-hmac-previous']).toBeUndefined();
    expect(String(webhook.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(standardVerifies(webhook, 'patched-shared-secret-03')).toBe(true);
    expect(standardVerifies(webhook, NEW_SECRET)).toBe(false);
  });

  it('keeps old-secret receivers verifying through the window and new-secret receivers from the first webhook after it', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: OLD_SECRET });
    const before = await createWallet(t, org, 'before rotation');
    await receiver.waitFor((r) => r.some((w) => w.body.resourceId === before));

    const windowSeconds = 3;
    const res = await t
      .http()
      .post(ROTATE_PATH)
      .set(bearer(org.adminKey))
      .send({ sharedSecret: NEW_SECRET, previousSecretValidSeconds: windowSeconds })
      .expect(200);
    const expiresAtMs = new Date(res.body.previousSecretExpiresAtUtc).getTime();
    const config = await t.http().get(CONFIG_PATH).set(bearer(org.adminKey)).expect(200);
    expect(config.body.previousSecretExpiresAtUtc).toBe(res.body.previousSecretExpiresAtUtc);

    // Events keep flowing across the switch, until well after the window closed.
    const after: string[] = [];
    while (Date.now() < expiresAtMs + 1500) {
      after.push(await createWallet(t, org, `after rotation ${after.length}`));
      await new Promise((r) => setTimeout(r, 150));
    }
    // Nothing lost: every event arrives.
    await receiver.waitFor((r) => after.every((id) => r.some((w) => w.body.resourceId === id)), 30_000);

    const first = receiver.received.find((w) => w.body.resourceId === before)!;
    expect(standardVerifies(first, OLD_SECRET)).toBe(true);
    expect(signatureIsValid(first, OLD_SECRET)).toBe(true);

    let during = 0;
    let afterExpiry = 0;
    for (const id of after) {
      for (const webhook of receiver.received.filter((w) => w.body.resourceId === id)) {
        // Nothing unverifiable: a receiver that switched at once verifies every one of them.
        expect(standardVerifies(webhook, NEW_SECRET)).toBe(true);
        expect(signatureIsValid(webhook, NEW_SECRET)).toBe(true);
        expect(String(webhook.headers['webhook-signature']).split(' ')[0]).toMatch(/^v1,/);
        // The signing instant lies in [timestamp, timestamp + 1 s): judge only webhooks clear of the boundary.
        const signedFromMs = Number(webhook.headers['webhook-timestamp']) * 1000;
        if (signedFromMs + 1000 <= expiresAtMs) {
          during += 1;
          expect(String(webhook.headers['webhook-signature']).split(' ')).toHaveLength(2);
          expect(standardVerifies(webhook, OLD_SECRET)).toBe(true);
          expect(previousSeedHeaderValid(webhook, OLD_SECRET)).toBe(true);
          expect(signatureIsValid(webhook, OLD_SECRET)).toBe(false);
        } else if (signedFromMs >= expiresAtMs) {
          afterExpiry += 1;
          expect(String(webhook.headers['webhook-signature']).split(' ')).toHaveLength(1);
          expect(webhook.headers['x-service-webhook-hmac-previous']).toBeUndefined();
          expect(standardVerifies(webhook, OLD_SECRET)).toBe(false);
          expect(signatureIsValid(webhook, OLD_SECRET)).toBe(false);
        }
      }
    }
    expect(during).toBeGreaterThan(0);
    expect(afterExpiry).toBeGreaterThan(0);

    // Once expired it is gone: from the API at once, and from storage by the worker's cleanup.
    const expired = await t.http().get(CONFIG_PATH).set(bearer(org.adminKey)).expect(200);
    expect(expired.body.previousSecretExpiresAtUtc).toBeNull();
    await waitUntil(
      () => configRow(org),
      (row) => row.previous_shared_secret_sealed === null && row.previous_secret_expires_at === null,
    );
    expect((await configRow(org)).shared_secret_sealed).toMatch(/^v2\./);
  });

  it('a zero window stops the old secret at once', async () => {
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: OLD_SECRET });
    const res = await t
      .http()
      .post(ROTATE_PATH)
      .set(bearer(org.adminKey))
      .send({ sharedSecret: NEW_SECRET, previousSecretValidSeconds: 0 })
      .expect(200);
    expect(res.body.previousSecretExpiresAtUtc).toMatch(/\+00:00$/);
    expect((await t.http().get(CONFIG_PATH).set(bearer(org.adminKey)).expect(200)).body.previousSecretExpiresAtUtc).toBeNull();
    expect((await configRow(org)).previous_shared_secret_sealed).toBeNull();
    await createWallet(t, org);
    const [webhook] = await receiver.waitFor((r) => r.length >= 1);
    expect(standardVerifies(webhook, NEW_SECRET)).toBe(true);
    expect(standardVerifies(webhook, OLD_SECRET)).toBe(false);
    expect(webhook.headers['x-service-webhook-hmac-previous']).toBeUndefined();
  });

  it('the cleanup of expired secrets never waits behind a change holding the configuration', async () => {
    const holder = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table "webhook_endpoint" in access exclusive mode');
      // It gives up instead of queueing; the next run erases what is due.
      await expect(t.app.get(WebhookEndpointsService).eraseExpiredPreviousSecrets()).rejects.toThrow(/lock timeout/);
      await holder.query('rollback');
      await expect(t.app.get(WebhookEndpointsService).eraseExpiredPreviousSecrets()).resolves.toEqual(expect.any(Number));
    } finally {
      await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }
  });
});
