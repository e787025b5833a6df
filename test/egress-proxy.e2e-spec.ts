import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { AddressInfo, connect, createServer as createNetServer, Server as NetServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetadataHttpClient } from '../src/modules/chain/metadata/metadata-http-client';
import { WebhookSender } from '../src/modules/webhooks/engine/webhook-sender';
import { bearer, createOrganization, TestOrganization } from './support/factories';
import { listenMutualTls, makePki, Pki } from './support/pki';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { createWallet, WEBHOOKS_PATH } from './support/webhooks';

const BASE = '/api/organization/v1/current-organization/webhook-endpoints';
const ALL_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];

/** An HTTP proxy that only tunnels (CONNECT), recording every destination it was asked for. */
class ConnectProxy {
  readonly tunnels: string[] = [];
  private server: NetServer | null = null;
  private readonly sockets = new Set<Socket>();

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createNetServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.once('data', (head: Buffer) => {
        const [method, target] = head.toString('latin1').split(' ');
        if (method !== 'CONNECT') {
          client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
          return;
        }
        this.tunnels.push(target);
        const [host, port] = target.split(':');
        const upstream = connect(Number(port), host, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(client);
          client.pipe(upstream);
        });
        this.sockets.add(upstream);
        upstream.on('close', () => this.sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const portOf = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port;

describe('egress proxy (WEBHOOK_PROXY_URL)', () => {
  let proxy: ConnectProxy;
  let t: TestApp;
  let receiver: TestReceiver;
  let dir: string;
  let pki: Pki;
  let https: HttpsServer;
  let tokenServer: HttpServer;
  let tokenRequests = 0;

  beforeAll(async () => {
    proxy = await new ConnectProxy().start();
    receiver = await new TestReceiver().start();
    dir = mkdtempSync(join(tmpdir(), 'egress-'));
    pki = makePki(dir);
    https = await listenMutualTls(pki);
    tokenServer = createHttpServer((req, res) => {
      req.resume();
      tokenRequests += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"proxied-token","expires_in":3600}');
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    t = await createTestApp({ WEBHOOK_PROXY_URL: proxy.url });
  });
  afterAll(async () => {
    // Tunnels first: a keep-alive connection through the proxy must not hold the app's close.
    await proxy.stop();
    https.closeAllConnections();
    await t.close();
    await receiver.stop();
    await new Promise<void>((resolve) => https.close(() => resolve()));
    tokenServer.closeAllConnections();
    await new Promise<void>((resolve) => tokenServer.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const succeeded = async (org: TestOrganization) =>
    waitUntil(
      () => t.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.length > 0 && res.body.webhooks.every((w: { status: string }) => w.status === 'succeeded'),
    );

  it('sends http webhooks, and the OAuth2 token request, through the proxy', async () => {
    const org = await createOrganization(t);
    await t
      .http()
      .post(BASE)
      .set(bearer(org.adminKey))
      .send({
        url: receiver.urlFor('/proxied'),
        webhookTypes: ALL_TYPES,
        auth: {
          type: 'oauth2ClientCredentials',
          tokenUrl: `http://127.0.0.1:${portOf(tokenServer)}/token`,
          clientId: 'client',
          clientSecret: 'client-secret',
        },
      })
      .expect(201);
    await createWallet(t, org);
    await receiver.waitFor((r) => r.some((w) => w.path === '/proxied'));
    await succeeded(org);
    expect(receiver.received.find((w) => w.path === '/proxied')?.headers.authorization).toBe('Bearer proxied-token');
    expect(tokenRequests).toBe(1);
    expect(proxy.tunnels).toEqual(
      expect.arrayContaining([`127.0.0.1:${Number(new URL(receiver.url).port)}`, `127.0.0.1:${portOf(tokenServer)}`]),
    );
  });

  it('tunnels https webhooks, mutual TLS included, through the proxy', async () => {
    const org = await createOrganization(t);
    const before = proxy.tunnels.length;
    await t
      .http()
      .post(BASE)
      .set(bearer(org.adminKey))
      .send({
        url: `https://127.0.0.1:${portOf(https)}/proxied-tls`,
        webhookTypes: ALL_TYPES,
        tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey, caCertificate: pki.ca },
      })
      .expect(201);
    await createWallet(t, org);
    await succeeded(org);
    expect(proxy.tunnels.slice(before)).toContain(`127.0.0.1:${portOf(https)}`);
  });

  it('fetches token metadata through the proxy', async () => {
    const metadata = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"Token #1"}'));
    await new Promise<void>((resolve) => metadata.listen(0, '127.0.0.1', resolve));
    const client = new MetadataHttpClient({
      timeoutMs: 2000,
      maxBytes: 4096,
      allowHttp: true,
      allowPrivateNetworks: true,
      allowedPorts: [[1, 65535]],
      proxyUrl: t.config.egress.proxyUrl,
    });
    try {
      expect(await client.fetchText(`http://127.0.0.1:${portOf(metadata)}/1.json`)).toBe('{"name":"Token #1"}');
      expect(proxy.tunnels).toContain(`127.0.0.1:${portOf(metadata)}`);
    } finally {
      await client.close();
      await new Promise<void>((resolve) => metadata.close(() => resolve()));
    }
  });

  it('still holds the destination to the URL policy: a private address never reaches the proxy', async () => {
    // A proxy of its own: the app's worker may still be sending earlier tests' webhooks through the shared one.
    const ownProxy = await new ConnectProxy().start();
    const options = { timeoutMs: 2000, allowHttp: true, allowPrivateNetworks: false, allowedPorts: [[1, 65535]] as [number, number][] };
    const sender = new WebhookSender({ ...options, proxyUrl: ownProxy.url });
    const metadataClient = new MetadataHttpClient({ ...options, maxBytes: 4096, proxyUrl: ownProxy.url });
    try {
      // A name resolving to loopback, and a literal private address.
      for (const url of [
        `http://localhost:${Number(new URL(receiver.url).port)}/x`,
        `http://127.0.0.1:${Number(new URL(receiver.url).port)}/x`,
      ]) {
        const result = await sender.send(url, '{}', {});
        expect(result).toEqual(expect.objectContaining({ outcome: 'blocked', status: null }));
        await expect(metadataClient.fetchText(url)).rejects.toThrow(/private, loopback, link-local/);
      }
      await expect(
        sender.requestToken({
          endpointId: 'e',
          tokenUrl: `http://localhost:${portOf(tokenServer)}/token`,
          clientId: 'c',
          clientSecret: 's',
          scope: null,
        }),
      ).rejects.toThrow(/private, loopback, link-local/);
      expect(ownProxy.tunnels).toEqual([]);
    } finally {
      await sender.close();
      await metadataClient.close();
      await ownProxy.stop();
    }
  });
});
