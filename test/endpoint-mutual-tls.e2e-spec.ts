import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { makePki, Pki } from './support/pki';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { createWallet, WEBHOOKS_PATH } from './support/webhooks';

const BASE = '/api/organization/v1/current-organization/webhook-endpoints';
const AUDIT_PATH = '/api/organization/v1/current-organization/audit-log';
const ALL_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];

describe('mutual TLS towards an endpoint', () => {
  let t: TestApp;
  let dir: string;
  let pki: Pki;
  let server: Server;
  /** Client certificate subjects (CN) of the webhooks the HTTPS receiver accepted. */
  const accepted: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mtls-'));
    pki = makePki(dir);
    server = createServer(
      { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        req.resume();
        req.on('end', () => {
          accepted.push(String((req.socket as TLSSocket).getPeerCertificate().subject.CN));
          res.writeHead(200).end('ok');
        });
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const url = (path: string) => `https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  const create = (org: TestOrganization, body: object) => t.http().post(BASE).set(bearer(org.adminKey)).send(body);

  /** The first attempt of the organization's one webhook, once made. */
  /**
   * The first attempt of the organization's webhook that got as far as an answer or a TLS
   * failure (an attempt in flight reads as interrupted until its result is written).
   */
  type Attempt = { responseStatus: number | null; error: string | null };
  const reachedAttempt = async (org: TestOrganization): Promise<Attempt> => {
    const log = await waitUntil(
      () => t.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.some((w: { attemptCount: number }) => w.attemptCount >= 1),
    );
    const reached = (a: Attempt) => a.responseStatus !== null || (a.error ?? '').startsWith('TLS');
    const detail = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}/${log.body.webhooks[0].id}`).set(bearer(org.adminKey)),
      (res) => (res.body.attempts as Attempt[]).some(reached),
    );
    return (detail.body.attempts as Attempt[]).find(reached) as Attempt;
  };

  it('presents the client certificate, trusts the private CA for that endpoint, and shows only subject and expiry', async () => {
    const org = await createOrganization(t);
    const res = await create(org, {
      url: url('/mtls-1'),
      webhookTypes: ALL_TYPES,
      tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey, caCertificate: pki.ca },
    }).expect(201);
    const notAfter = new Date(new X509Certificate(pki.clientCert).validTo);
    expect(res.body.tls).toEqual({
      hasClientKey: true,
      subject: 'O=Example Wallets, CN=nft-wallet-client',
      notAfterUtc: `${notAfter.toISOString().slice(0, 19)}.000000+00:00`,
    });
    await createWallet(t, org);
    const attempt = await reachedAttempt(org);
    expect(attempt).toEqual(expect.objectContaining({ responseStatus: 200, error: null }));
    expect(accepted).toContain('nft-wallet-client');

    // The key appears in no answer, audit entry or log line.
    const keyBody = pki.clientKey.split('\n')[1];
    const shown = await t.http().get(`${BASE}/${res.body.id}`).set(bearer(org.adminKey)).expect(200);
    const audit = await t.http().get(AUDIT_PATH).set(bearer(org.adminKey)).query({ pageSize: 1000 }).expect(200);
    expect(audit.body.entries.find((e: { action: string }) => e.action === 'webhookEndpoint.create').changes.tlsClientKey).toEqual({
      from: null,
      to: '[redacted]',
    });
    for (const text of [res.text, shown.text, audit.text, ...t.logs]) expect(text).not.toContain(keyBody);
  });

  it('fails the attempt, naming the certificate failure, when the receiver refuses the client certificate', async () => {
    const org = await createOrganization(t);
    await create(org, {
      url: url('/mtls-2'),
      webhookTypes: ALL_TYPES,
      tls: { clientCertificate: pki.strangerCert, clientKey: pki.strangerKey, caCertificate: pki.ca },
    }).expect(201);
    await createWallet(t, org);
    const attempt = await reachedAttempt(org);
    expect(attempt.responseStatus).toBeNull();
    // A Node server under TLS 1.3 closes the connection; others send a certificate alert.
    expect(attempt.error).toMatch(/^TLS(: .*refuse the client certificate| handshake failed \(ERR_SSL_.*ALERT)/);
  });

  it('fails the attempt, naming the certificate failure, without a client certificate or the private CA', async () => {
    const org = await createOrganization(t);
    await create(org, { url: url('/mtls-3'), webhookTypes: ALL_TYPES }).expect(201);
    await createWallet(t, org);
    const attempt = await reachedAttempt(org);
    expect(attempt.error).toMatch(/^TLS handshake failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN)\)/);
  });

  it('refuses certificates that do not parse and a key that does not match, naming the field, changing nothing', async () => {
    const org = await createOrganization(t);
    const base = { url: url('/mtls-4'), webhookTypes: ALL_TYPES };
    const cases: Array<[object, string[]]> = [
      [{ clientCertificate: 'not a certificate', clientKey: pki.clientKey }, ['tls.clientCertificate']],
      [{ clientCertificate: pki.clientCert, clientKey: pki.strangerKey }, ['tls.clientKey']],
      [{ clientCertificate: pki.clientCert, clientKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' }, ['tls.clientKey']],
      [{ clientCertificate: pki.clientCert, clientKey: pki.clientKey, caCertificate: 'junk' }, ['tls.caCertificate']],
      [{ clientCertificate: pki.clientCert }, ['tls.clientKey']],
    ];
    for (const [tls, fields] of cases) {
      const res = await create(org, { ...base, tls });
      expect(res.status).toBe(400);
      expect([...new Set((res.body.errors as { field: string }[]).map((e) => e.field))]).toEqual(fields);
      expect(res.text).not.toContain(pki.strangerKey.split('\n')[1]);
    }
    const list = await t.http().get(BASE).set(bearer(org.adminKey)).expect(200);
    expect(list.body.endpoints).toHaveLength(1);
  });
});
