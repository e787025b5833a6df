import { Client } from 'pg';
import { loadConfig } from '../src/config/app-config';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { TestReceiver } from './support/receiver';
import { ServiceProcess } from './support/service-process';
import { HttpTarget, testEnv } from './support/test-app';
import { configureWebhooks, createWallet } from './support/webhooks';

const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';
const ALL_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];
const SLOW_ENDPOINTS = 8;
const NOISY_WRITES = 100; // 100 writes x 8 endpoints = 800 queued webhooks
const SLOW_ANSWER_MS = 10_000;
/**
 * One write a second for 15 s: past the noisy organization's first wave, whose attempts ride in
 * the jobs that judged its events, into its steady state, where each attempt is a job of its own
 * (the state in which the finding's webhooks waited behind its attempts).
 */
const QUIET_WRITES = 15;
const QUIET_EVERY_MS = 1000;
/** docs/WEBHOOKS.md "Isolation": another organization's webhook arrives within this of its write. */
const ARRIVAL_DEADLINE_MS = 2000;

/**
 * The way the finding was made (docs/WEBHOOKS.md "Isolation"), against the service as deployed: an API
 * process and a worker process of their own, on a database and queue of their own. One
 * organization points 8 endpoints at a receiver that answers after 10 s and has 800 webhooks
 * queued; another organization's webhooks to a healthy receiver must each still arrive within 2 s
 * of the write. The deadline is measured by the receiver from the moment the write was sent;
 * under the old scheduling they arrived after 38-45 s.
 *
 * Separate processes are what make the 2 s a statement about the scheduler: an app inside the
 * test runner shares its event loop and heap with everything the suites before it left behind.
 */
describe('webhook scheduling is fair across organizations', () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: Client;
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let t: HttpTarget;
  let slow: TestReceiver;
  let healthy: TestReceiver;
  // Default concurrency (50, so 25 per organization); the timeout is above the receiver's 10 s
  // so the noisy organization's attempts hold their slots for the full 10 s.
  const overrides = { WEBHOOK_TIMEOUT_MS: '15000' };
  const perOrganization = loadConfig(testEnv(overrides)).webhook.perOrganizationConcurrency;

  beforeAll(async () => {
    database = await createIsolatedDatabase('fairness');
    db = new Client({ connectionString: database.url });
    await db.connect();
    const env = testEnv({ ...overrides, DATABASE_URL: database.url, QUEUE_PREFIX: `fair${Date.now().toString(36)}` });
    [api, worker] = await Promise.all([ServiceProcess.start({ ...env, ROLE: 'api' }), ServiceProcess.start({ ...env, ROLE: 'worker' })]);
    t = api.client;
    slow = await new TestReceiver().start();
    slow.behaviour = () => ({ status: 200, delayMs: SLOW_ANSWER_MS });
    healthy = await new TestReceiver().start();
  }, 120_000);
  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await healthy?.stop();
    await slow?.stop();
    await db?.end();
    await database?.drop();
  }, 60_000);

  const addEndpoint = (org: TestOrganization, url: string) =>
    t
      .http()
      .post(ENDPOINTS_PATH)
      .set(bearer(org.adminKey))
      .send({ url, sharedSecret: 'fairness-secret-0123456789', webhookTypes: ALL_TYPES })
      .expect(201);

  it("an organization's webhooks arrive within 2 s while another's 8 slow endpoints have 800 webhooks queued", async () => {
    const noisy = await createOrganization(t);
    const quiet = await createOrganization(t);
    for (let i = 0; i < SLOW_ENDPOINTS; i += 1) await addEndpoint(noisy, slow.urlFor(`/slow-${i}`));
    await configureWebhooks(t, quiet, { url: healthy.url, sharedSecret: 'quiet-secret-0123456789' });

    for (let i = 0; i < NOISY_WRITES; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => createWallet(t, noisy, `noisy-${i + j}`)));
    }
    // The noisy organization's endpoints are saturated: its attempts are in flight and held.
    await slow.waitFor((r) => r.length >= perOrganization, 20_000);

    for (let i = 0; i < QUIET_WRITES; i += 1) {
      const writtenAt = Date.now();
      const walletId = await createWallet(t, quiet, `quiet-${i}`);
      const remaining = ARRIVAL_DEADLINE_MS - (Date.now() - writtenAt);
      await healthy.waitFor((r) => r.some((w) => w.body.resourceId === walletId), Math.max(0, remaining));
      expect(healthy.received.find((w) => w.body.resourceId === walletId)!.receivedAt - writtenAt).toBeLessThanOrEqual(ARRIVAL_DEADLINE_MS);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, writtenAt + QUIET_EVERY_MS - Date.now())));
    }

    // The noisy organization was busy throughout: its first wave answered and more were sent.
    expect(slow.received.length).toBeGreaterThan(perOrganization);
    // None of the noisy organization's webhooks was lost: all 800 exist, those not yet attempted
    // pending (put back in line like a webhook whose endpoint is at its limit, not dropped).
    const { rows } = await db.query<{ total: string; failed: string }>(
      `select count(*) as total, count(*) filter (where status = 'failed') as failed from webhook_delivery where organization_id = $1`,
      [noisy.id],
    );
    expect({ total: Number(rows[0].total), failed: Number(rows[0].failed) }).toEqual({ total: SLOW_ENDPOINTS * NOISY_WRITES, failed: 0 });
  }, 120_000);
});
