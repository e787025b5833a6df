import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { WEBHOOK_TYPES } from '../src/common/webhook-types';
import { bearer, createApiKey, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { ImageServer, images } from './support/image-server';
import { nftApi } from './support/nft';
import { ReceivedWebhook, TestReceiver } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, WEBHOOKS_PATH } from './support/webhooks';

const SECRET = 'event-types-shared-secret-01';
const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';

interface EventType {
  webhookType: string;
  resourceType: string;
  actions: string[];
  schema: Record<string, any>;
}

/** A strict JSON Schema 2020-12 validator, as an integrator would set one up (formats included). */
function validator(schema: Record<string, unknown>) {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema);
}

/** `[label, errors]`, so a failure names what did not validate and why. */
function check(schema: Record<string, unknown>, value: unknown, label: string): [string, unknown] {
  const validate = validator(schema);
  return [label, validate(value) ? [] : validate.errors];
}

/** The `data` subschema of an entry on its own, with the definitions it refers to. */
const dataSchema = (entry: EventType) => ({ $schema: entry.schema.$schema, $defs: entry.schema.$defs, ...entry.schema.properties.data });

describe('event catalogue (GET /v1/event-types)', () => {
  let t: TestApp;
  let org: TestOrganization;
  let catalogue: EventType[];
  const entry = (webhookType: string, resourceType: string) => {
    const found = catalogue.find((e) => e.webhookType === webhookType && e.resourceType === resourceType);
    if (!found) throw new Error(`no catalogue entry ${webhookType}/${resourceType}`);
    return found;
  };

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    catalogue = (await t.http().get('/v1/event-types').set(bearer(org.adminKey)).expect(200)).body.eventTypes;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('the route', () => {
    it('answers a read key with every body the service sends, a schema for each, as it answers admin', async () => {
      const read = await createApiKey(t, org.id, ['read']);
      const res = await t.http().get('/v1/event-types').set(bearer(read.key)).expect(200);
      expect(res.body.eventTypes).toEqual(catalogue);
      expect(catalogue.map((e) => `${e.webhookType}/${e.resourceType}: ${e.actions.join(',')}`)).toEqual([
        'payment/WebhookTest: test',
        'transaction/Transaction: create,update',
        'transaction/WebhookTest: test',
        'nft/Token: create,update',
        'nft/WebhookTest: test',
        'kyc/WebhookTest: test',
        'document/WebhookTest: test',
        'custodialAccount/Wallet: create',
        'custodialAccount/WebhookTest: test',
        'operational/WebhookEndpoint: disabled,enabled,failing,recovered',
        'operational/Webhook: exhausted',
        'operational/WebhookTest: test',
      ]);
      for (const e of catalogue) {
        expect(e.schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
        expect(e.schema.properties.action.enum).toEqual(e.actions);
        expect(e.schema.properties.resourceType.const).toBe(e.resourceType);
        expect(() => validator(e.schema)).not.toThrow();
      }
    });

    it('refuses a request without an API key, and a key without the read role', async () => {
      expectProblem(await t.http().get('/v1/event-types'), 401, 'UNAUTHENTICATED');
      const write = await createApiKey(t, org.id, ['write']);
      expectProblem(await t.http().get('/v1/event-types').set(bearer(write.key)), 403, 'FORBIDDEN');
    });
  });

  describe('what the service sends today validates against its schema', () => {
    let receiver: TestReceiver;
    let imageServer: ImageServer;
    let received: ReceivedWebhook[];
    let typeOf: Map<string, string>;
    const ids = { walletId: '', tokenId: '', transactionId: '' };

    beforeAll(async () => {
      receiver = await new TestReceiver().start();
      imageServer = await new ImageServer().start();
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, webhookTypes: [...WEBHOOK_TYPES] });
      const api = nftApi(t, org.adminKey);
      ids.walletId = (await api.wallet({ name: 'catalogue wallet' })).id;
      ids.tokenId = (await api.token({ metadata: { name: 'Catalogue token' } })).id;
      const image = imageServer.image('/catalogue.png', await images.png(120, 80));
      await t
        .http()
        .patch(`/v1/tokens/${ids.tokenId}`)
        .set(api.auth)
        .send({ metadata: { name: 'Renamed', editionId: 7, image } })
        .expect(200);
      ids.transactionId = (await api.mint(ids.tokenId, ids.walletId, '2')).id;
      const tests: string[] = [];
      for (const webhookType of WEBHOOK_TYPES) {
        const res = await t.http().post(`${ENDPOINTS_PATH}/${org.id}/test`).set(api.auth).send({ webhookType }).expect(202);
        tests.push(res.body.id);
      }

      const sent =
        (resourceType: string, action: string, and: (w: ReceivedWebhook) => boolean = () => true) =>
        (r: ReceivedWebhook[]) =>
          r.some((w) => w.body.resourceType === resourceType && w.body.action === action && and(w));
      const media = (w: ReceivedWebhook) => (w.body.changes as { media?: { status: string } } | null)?.media?.status === 'ok';
      await receiver.waitFor(
        (r) =>
          [
            sent('Wallet', 'create'),
            sent('Token', 'create'),
            sent('Token', 'update', (w) => !media(w)),
            sent('Token', 'update', media),
            sent('Transaction', 'create'),
          ].every((seen) => seen(r)) && tests.every((id) => r.some((w) => w.body.id === id)),
        45_000,
      );
      received = [...receiver.received];
      const log = await t.http().get(WEBHOOKS_PATH).query({ pageSize: 1000 }).set(bearer(org.adminKey)).expect(200);
      typeOf = new Map(log.body.webhooks.map((w: { id: string; webhookType: string }) => [w.id, w.webhookType]));
    }, 90_000);
    afterAll(async () => {
      await receiver?.stop();
      await imageServer?.stop();
    });

    it('sends wallet, token and transaction events and a test webhook of every type', () => {
      const kinds = new Set(received.map((w) => [typeOf.get(String(w.body.id)), w.body.resourceType, w.body.action].join('/')));
      expect([...kinds].sort()).toEqual(
        expect.arrayContaining([
          'custodialAccount/Wallet/create',
          'nft/Token/create',
          'nft/Token/update',
          'transaction/Transaction/create',
          ...WEBHOOK_TYPES.map((type) => `${type}/WebhookTest/test`),
        ]),
      );
      const changes = received.filter((w) => w.body.action === 'update').map((w) => w.body.changes as Record<string, any>);
      expect(changes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'Renamed', editionId: 7 }),
          { media: expect.objectContaining({ status: 'ok', contentType: 'image/png' }) },
        ]),
      );
    });

    it('every body received validates against the schema of its webhook type and resourceType', () => {
      const results = received.map((w) => {
        const webhookType = typeOf.get(String(w.body.id));
        expect(webhookType).toBeDefined();
        return check(entry(webhookType!, String(w.body.resourceType)).schema, w.body, `${webhookType} ${w.raw.toString('utf8')}`);
      });
      expect(results.length).toBeGreaterThanOrEqual(5 + WEBHOOK_TYPES.length);
      for (const [label, errors] of results) expect([label, errors]).toEqual([label, []]);
    });

    it("every resource's GET answer validates as `data`, so full bodies validate too", async () => {
      const key = bearer(org.adminKey);
      const webhookId = String(received.find((w) => w.body.resourceType === 'Wallet')!.body.id);
      const answers: [EventType, string][] = [
        [entry('custodialAccount', 'Wallet'), `/v1/wallets/${ids.walletId}`],
        [entry('nft', 'Token'), `/v1/tokens/${ids.tokenId}`],
        [entry('transaction', 'Transaction'), `/v1/transactions/${ids.transactionId}`],
        [entry('operational', 'WebhookEndpoint'), `${ENDPOINTS_PATH}/${org.id}`],
        [entry('operational', 'Webhook'), `${WEBHOOKS_PATH}/${webhookId}`],
      ];
      for (const [e, path] of answers) {
        const answer = (await t.http().get(path).set(key).expect(200)).body;
        expect(check(dataSchema(e), answer, path)).toEqual([path, []]);
        const [sample] = received.filter((w) => w.body.resourceType === e.resourceType);
        if (sample) expect(check(e.schema, { ...sample.body, data: answer }, `full ${path}`)).toEqual([`full ${path}`, []]);
      }
      // The token's answer is a settled one: its image fetched, with signed thumbnail links.
      const token = (await t.http().get(`/v1/tokens/${ids.tokenId}`).set(key).expect(200)).body;
      expect(token.media.thumbnails).toEqual(expect.objectContaining({ small: expect.any(String) }));
      // `data` is held to the resource's schema: a wrong answer does not pass.
      const [, errors] = check(dataSchema(entry('nft', 'Token')), { ...token, media: null }, 'broken token');
      expect(errors).not.toEqual([]);
    });
  });
});
