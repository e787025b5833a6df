import { IN_FLIGHT, INTERRUPTED } from '../src/modules/webhooks/webhook-delivery.repository';
import { bearer, createApiKey, createOrganization, TestOrganization } from './support/factories';
import { CLIENT_ID, CLIENT_SECRET, TokenServer } from './support/oauth2';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { createWallet, WEBHOOKS_PATH } from './support/webhooks';

const BASE = '/api/organization/v1/current-organization/webhook-endpoints';
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const ALL_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];

describe('OAuth2 client credentials towards an endpoint', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let tokens: TokenServer;
  /** Tokens the receiver no longer accepts. */
  const revoked = new Set<string>();

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await new TestReceiver().start();
    // Like a resource server: a webhook needs a token the token server issued and nobody revoked.
    // Under /echo it answers with the request's credentials in its body, as a debugging endpoint might.
    receiver.behaviour = (_n, webhook: ReceivedWebhook) => {
      const token = String(webhook.headers.authorization ?? '').replace(/^Bearer /, '');
      const status = tokens.issued.includes(token) && !revoked.has(token) ? 200 : 401;
      const { authorization, 'x-gateway-token': gateway } = webhook.headers;
      if (webhook.path === '/echo-json') return { status, body: JSON.stringify({ authorization, gateway }) };
      // The token begins 3 bytes before the log's 1,024-byte cut.
      if (webhook.path === '/echo-split') return { status, body: `${'.'.repeat(1014)}${String(authorization)}|${String(gateway)}` };
      return { status };
    };
  });
  beforeEach(async () => {
    tokens = await new TokenServer().start();
  });
  afterEach(async () => {
    await tokens.stop();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  const newEndpoint = async (org: TestOrganization, path: string, headers?: Record<string, string>) =>
    (
      await t
        .http()
        .post(BASE)
        .set(bearer(org.adminKey))
        .send({
          url: receiver.urlFor(path),
          webhookTypes: ALL_TYPES,
          headers,
          auth: {
            type: 'oauth2ClientCredentials',
            tokenUrl: tokens.url,
            clientId: CLIENT_ID,
            clientSecret: CLIENT_SECRET,
            scope: 'webhooks',
          },
        })
        .expect(201)
    ).body;

  const delivered = (path: string) => receiver.received.filter((w) => w.path === path && w.headers.authorization !== undefined);

  it('gets one token for many webhooks, sends it as a bearer token, and never shows the client secret', async () => {
    const org = await createOrganization(t);
    const endpoint = await newEndpoint(org, '/oauth-1');
    expect(endpoint.auth).toEqual({
      type: 'oauth2ClientCredentials',
      tokenUrl: tokens.url,
      clientId: CLIENT_ID,
      scope: 'webhooks',
      hasClientSecret: true,
    });
    for (let i = 0; i < 5; i += 1) await createWallet(t, org, `w${i}`);
    await receiver.waitFor(() => delivered('/oauth-1').filter((w) => w.headers.authorization === 'Bearer tok-1').length >= 5);
    expect(tokens.requests).toHaveLength(1);
    expect(tokens.requests[0].body).toBe('grant_type=client_credentials&scope=webhooks');
    expect(tokens.requests[0].headers['content-type']).toBe('application/x-www-form-urlencoded');

    const shown = await t.http().get(`${BASE}/${endpoint.id}`).set(bearer(org.adminKey)).expect(200);
    const audit = await t.http().get(AUDIT_PATH).set(bearer(org.adminKey)).query({ pageSize: 1000 }).expect(200);
    const created = audit.body.entries.find((e: { action: string }) => e.action === 'webhookEndpoint.create');
    expect(created.changes.authClientSecret).toEqual({ from: null, to: '[redacted]' });
    for (const text of [JSON.stringify(endpoint), shown.text, audit.text, ...t.logs]) {
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain('tok-1');
    }
  });

  it('gets a new token once the cached one is within 30 s of expiring', async () => {
    const org = await createOrganization(t);
    // Usable for one second: 31 s of life minus the 30 s margin.
    tokens.expiresIn = 31;
    await newEndpoint(org, '/oauth-2');
    await createWallet(t, org, 'first');
    await receiver.waitFor(() => delivered('/oauth-2').length >= 1);
    expect(tokens.requests).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await createWallet(t, org, 'second');
    await receiver.waitFor(() => delivered('/oauth-2').some((w) => w.headers.authorization === 'Bearer tok-2'));
    expect(tokens.requests).toHaveLength(2);
  });

  it('on a 401 from the endpoint gets a new token and tries again within the same attempt', async () => {
    const org = await createOrganization(t);
    await newEndpoint(org, '/oauth-3');
    await createWallet(t, org, 'first');
    await receiver.waitFor(() => delivered('/oauth-3').length >= 1);
    revoked.add('tok-1');
    await createWallet(t, org, 'second');
    await receiver.waitFor(() => delivered('/oauth-3').some((w) => w.headers.authorization === 'Bearer tok-2'));
    const second = delivered('/oauth-3').slice(1);
    expect(second.map((w) => [w.headers.authorization, w.headers['x-service-webhook-attempt']])).toEqual([
      ['Bearer tok-1', '1'],
      ['Bearer tok-2', '1'],
    ]);
    expect(tokens.requests).toHaveLength(2);
    const id = second[0].body.id as string;
    const detail = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(org.adminKey)),
      (res) => res.body.status === 'succeeded',
    );
    expect(detail.body.attemptCount).toBe(1);
  });

  it('fails the attempt, naming the token endpoint, when no token can be had', async () => {
    const org = await createOrganization(t);
    tokens.refuse = true;
    await newEndpoint(org, '/oauth-4');
    await createWallet(t, org);
    const log = await waitUntil(
      () => t.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.some((w: { attemptCount: number }) => w.attemptCount >= 1),
    );
    const id = log.body.webhooks[0].id as string;
    // An attempt reads as in flight (or interrupted, once its worker is gone) until its result is written.
    const detail = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(org.adminKey)),
      (res) => res.body.attempts.length > 0 && ![IN_FLIGHT, INTERRUPTED].includes(res.body.attempts[0].error),
    );
    expect(detail.body.attempts[0].error).toBe('no OAuth2 token: the token endpoint answered 401 (invalid_client)');
    expect(delivered('/oauth-4')).toHaveLength(0);
  });

  it('holds the token URL to the webhook URL policy, and refuses incomplete auth, with a 400 naming the field', async () => {
    const org = await createOrganization(t);
    const auth = {
      type: 'oauth2ClientCredentials',
      tokenUrl: 'http://user:pw@127.0.0.1:9/token',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    };
    const bad = await t
      .http()
      .post(BASE)
      .set(bearer(org.adminKey))
      .send({ url: receiver.urlFor('/oauth-5'), webhookTypes: [], auth });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      { field: 'auth.tokenUrl', message: expect.stringMatching(/^auth\.tokenUrl must not contain credentials/) },
    ]);
    const { clientSecret: _left, ...withoutSecret } = { ...auth, tokenUrl: tokens.url };
    const incomplete = await t
      .http()
      .post(BASE)
      .set(bearer(org.adminKey))
      .send({ url: receiver.urlFor('/oauth-5'), webhookTypes: [], auth: withoutSecret });
    expect(incomplete.status).toBe(400);
    expect(JSON.stringify(incomplete.body.errors)).toContain('auth.clientSecret');
    const list = await t.http().get(BASE).set(bearer(org.adminKey)).expect(200);
    expect(list.body.endpoints).toHaveLength(1);
  });
  /** `org`'s webhook to `endpointId` as `key` reads it, once its first attempt's result is written and `done` holds. */
  async function firstAttempt(
    org: TestOrganization,
    endpointId: string,
    key = org.adminKey,
    done: (webhook: { status: string }) => boolean = () => true,
  ) {
    const log = await waitUntil(
      () => t.http().get(WEBHOOKS_PATH).query({ endpointId }).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.some((w: { attemptCount: number }) => w.attemptCount >= 1),
    );
    const id = log.body.webhooks[0].id as string;
    // An attempt in flight reads as interrupted until its result is written.
    return waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${id}`).set(bearer(key)),
      (res) =>
        res.status === 200 &&
        res.body.attempts.length > 0 &&
        ![IN_FLIGHT, INTERRUPTED].includes(res.body.attempts[0].error) &&
        done(res.body),
    );
  }

  it('fails the attempt, naming the token endpoint, when the token answer is longer than 16 KiB, and never uses its token', async () => {
    const org = await createOrganization(t);
    // A well-formed grant, padded to 1 MiB.
    tokens.answer = (token) =>
      JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600, padding: 'x'.repeat(1024 * 1024) });
    const endpoint = await newEndpoint(org, '/oauth-huge');
    await createWallet(t, org);
    const detail = await firstAttempt(org, endpoint.id);
    expect(detail.body.attempts[0]).toMatchObject({
      responseStatus: null,
      error: 'no OAuth2 token: the token endpoint answered more than 16 KiB',
    });
    expect(tokens.requests.length).toBeGreaterThanOrEqual(1);
    expect(receiver.received.filter((w) => w.path === '/oauth-huge')).toHaveLength(0);
  });

  it("keeps neither the access token nor a custom header's value in an attempt's responseBody, also when cut at 1,024 bytes", async () => {
    const org = await createOrganization(t);
    const auditorKey = (await createApiKey(t, org.id, ['auditor'])).key;
    const gateway = 'gw-value-Hs82-unique';
    const json = await newEndpoint(org, '/echo-json', { 'X-Gateway-Token': gateway });
    const split = await newEndpoint(org, '/echo-split', { 'X-Gateway-Token': gateway });
    await createWallet(t, org, 'echoed');
    await receiver.waitFor((r) => ['/echo-json', '/echo-split'].every((path) => r.some((w) => w.path === path)));
    // The receiver did get (and echo) both.
    const echoed = receiver.received.find((w) => w.path === '/echo-json')!;
    expect(echoed.headers).toMatchObject({ authorization: expect.stringMatching(/^Bearer tok-\d+$/), 'x-gateway-token': gateway });

    for (const key of [org.adminKey, auditorKey]) {
      const whole = await firstAttempt(org, json.id, key, (w) => w.status === 'succeeded');
      expect(whole.body.attempts[0].responseBody).toBe(JSON.stringify({ authorization: 'Bearer [redacted]', gateway: '[redacted]' }));
      const cut = await firstAttempt(org, split.id, key, (w) => w.status === 'succeeded');
      // 1,024 characters: what fits of the marker.
      expect(cut.body.attempts[0].responseBody).toBe(`${'.'.repeat(1014)}Bearer [re`);
      for (const text of [whole.text, cut.text]) {
        expect(text).not.toContain(gateway);
        for (const token of tokens.issued) expect(text).not.toContain(token);
      }
    }
  });
});
