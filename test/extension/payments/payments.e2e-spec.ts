import { MikroORM } from '@mikro-orm/core';
import { runMigrations } from '../../../src/database/migrate';
import { DomainEventPublisher } from '../../../src/modules/domain-events/domain-event.publisher';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from '../../support/factories';
import { eventCount, sql, UNKNOWN_ID } from '../../support/nft';
import { TestReceiver } from '../../support/receiver';
import { createTestApp, TestApp } from '../../support/test-app';
import { configureWebhooks, createWallet, signatureIsValid } from '../../support/webhooks';
import { PaymentsModule } from './payments.module';

const SECRET = 'payments-shared-secret-0123456789';

/**
 * A module built by following docs/EXTENDING.md, outside src: it registers its own entity,
 * migration and event type, and its write reaches an integrator as a signed `payment` webhook
 * through the service's real pipeline.
 */
describe('extension module: payments', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let org: TestOrganization;
  let walletId: string;

  beforeAll(async () => {
    t = await createTestApp({}, { extensions: [PaymentsModule] });
    // What main.ts does on start: the module's migration is among the pending ones.
    await runMigrations(t.app.get(MikroORM), t.config.databaseUrl);
    receiver = await new TestReceiver().start();
    org = await createOrganization(t);
    walletId = await createWallet(t, org);
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, webhookTypes: ['payment'] });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('applies its own migration through the service migration runner', async () => {
    const [row] = await sql<{ name: string }>(t, `select "name" from "mikro_orm_migrations" where "name" like ?`, [
      'Migration20261123120000Payments%',
    ]);
    expect(row).toBeDefined();
  });

  it('delivers the payment event of a write, signed, to the integrator', async () => {
    const res = await t
      .http()
      .post('/v1/payments')
      .set(bearer(org.adminKey))
      .send({ walletId, amount: '250', reference: 'invoice-17' })
      .expect(201);
    expect(res.body).toMatchObject({ walletId, amount: '250', reference: 'invoice-17' });

    const webhooks = await receiver.waitFor((r) => r.some((w) => w.body.resourceId === res.body.id));
    const webhook = webhooks.find((w) => w.body.resourceId === res.body.id)!;
    expect(signatureIsValid(webhook, SECRET)).toBe(true);
    expect(webhook.body).toMatchObject({
      organizationId: org.id,
      resourceType: 'Payment',
      resourceId: res.body.id,
      action: 'create',
      changes: null,
    });
    // Only the subscribed type arrives: the wallet's custodialAccount event was filtered out.
    expect(receiver.received.map((w) => w.body.resourceType)).toEqual(['Payment']);

    await t.http().get(`/v1/payments/${res.body.id}`).set(bearer(org.adminKey)).expect(200);
    const stranger = await createOrganization(t);
    expectProblem(await t.http().get(`/v1/payments/${res.body.id}`).set(bearer(stranger.adminKey)), 404, 'PAYMENT_NOT_FOUND');
  });

  it('refuses bad input with 400 or 404 and writes neither a payment nor an event', async () => {
    const before = await eventCount(t, org.id);
    expectProblem(await t.http().post('/v1/payments').set(bearer(org.adminKey)).send({ walletId, amount: '-1' }), 400, 'VALIDATION_FAILED');
    expectProblem(
      await t.http().post('/v1/payments').set(bearer(org.adminKey)).send({ walletId: UNKNOWN_ID, amount: '1' }),
      404,
      'WALLET_NOT_FOUND',
    );
    expect(await eventCount(t, org.id)).toBe(before);
    const [{ n }] = await sql<{ n: string }>(t, 'select count(*)::text as n from "payment" where "organization_id" = ?', [org.id]);
    expect(n).toBe('1');
  });

  it('is guarded like every route: read keys read, write keys write', async () => {
    const read = (await createApiKey(t, org.id, ['read'])).key;
    const write = (await createApiKey(t, org.id, ['write'])).key;
    expectProblem(await t.http().post('/v1/payments').send({ walletId, amount: '1' }), 401, 'UNAUTHENTICATED');
    expectProblem(await t.http().post('/v1/payments').set(bearer(read)).send({ walletId, amount: '1' }), 403, 'FORBIDDEN');
    const created = await t.http().post('/v1/payments').set(bearer(write)).send({ walletId, amount: '1' }).expect(201);
    expectProblem(await t.http().get(`/v1/payments/${created.body.id}`).set(bearer(write)), 403, 'FORBIDDEN');
    await t.http().get(`/v1/payments/${created.body.id}`).set(bearer(read)).expect(200);
  });

  it('cannot publish an event type no module declared', () => {
    const publisher = t.app.get(DomainEventPublisher);
    const em = t.app.get(MikroORM).em.fork();
    expect(() =>
      publisher.publish(em as never, org.id, {
        webhookType: 'kyc',
        resourceType: 'KycCheck',
        action: 'create',
        resourceId: UNKNOWN_ID,
        changes: null,
      }),
    ).toThrow(/Undeclared domain event/);
  });
});
