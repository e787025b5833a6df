import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { mediaLinkPath } from '../src/modules/media/media.rules';
import { bearer, createOrganization, expectProblem, TestOrganization } from './support/factories';
import { dominant, ImageServer, images } from './support/image-server';
import { newAddress, sql } from './support/nft';
import { TestReceiver, waitUntil } from './support/receiver';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet } from './support/webhooks';

const SECRET = 'media-webhooks-shared-secret-0123456789';
const MEDIA_KEYS = ['contentType', 'error', 'height', 'sha256', 'status', 'thumbnails', 'width'];

type Token = { id: string; media: Record<string, unknown> & { thumbnails: Record<string, string> | null } };

async function createToken(t: TestApp, org: TestOrganization, image: string | null, contractAddress = newAddress()): Promise<Token> {
  const res = await t
    .http()
    .post('/v1/tokens')
    .set(bearer(org.adminKey))
    .send({ contractAddress, blockchainTokenId: '1', metadata: { name: 'Token', image } })
    .expect(201);
  return res.body;
}

async function getToken(t: TestApp, org: TestOrganization, tokenId: string): Promise<Token> {
  return (await t.http().get(`/v1/tokens/${tokenId}`).set(bearer(org.adminKey)).expect(200)).body;
}

/** The token once its media is no longer pending (or once `done` says so). */
async function settled(t: TestApp, org: TestOrganization, tokenId: string, done = (token: Token) => token.media.status !== 'pending') {
  return waitUntil(() => getToken(t, org, tokenId), done, 45_000);
}

/** GETs a thumbnail link as a browser would: no API key, only the link. */
async function fetchLink(t: TestApp, link: string) {
  const url = new URL(link);
  return t
    .http()
    .get(`${url.pathname}${url.search}`)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
}

describe('token images: fetched, checked, turned into thumbnails, served by signed links', () => {
  let server: ImageServer;

  beforeAll(async () => {
    server = await new ImageServer().start();
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe('on a development deployment (private networks allowed)', () => {
    let t: TestApp;
    let org: TestOrganization;
    let receiver: TestReceiver;

    beforeAll(async () => {
      receiver = await new TestReceiver().start();
      t = await createTestApp({ IPFS_GATEWAY_URL: `${server.origin}/gateway/ipfs/` });
      org = await createOrganization(t);
      await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET, webhookTypes: ['nft'] });
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.stop();
    });

    const mediaWebhooks = (tokenId: string) =>
      receiver.received.filter((w) => {
        const body = w.body as { resourceId?: string; changes?: Record<string, unknown> | null };
        return body.resourceId === tokenId && body.changes !== null && body.changes !== undefined && 'media' in body.changes;
      });

    it.each([
      ['PNG', () => images.png(300, 200), 'image/png'],
      ['JPEG', () => images.jpeg(300, 200), 'image/jpeg'],
      ['WebP', () => images.webp(300, 200), 'image/webp'],
      ['AVIF', () => images.avif(300, 200), 'image/avif'],
      ['GIF', () => images.animatedGif(300, 200), 'image/gif'],
    ])('%s: pending on the write, then ok with its type by bytes, size, sha256 and three WebP thumbnails', async (label, make, type) => {
      const bytes = await make();
      // The declared type is wrong on purpose: only the bytes count.
      const url = server.image(`/formats/${label}`, bytes, 'text/plain');
      const created = await createToken(t, org, url);
      expect(Object.keys(created.media).sort()).toEqual(MEDIA_KEYS);
      expect(created.media).toEqual({
        status: 'pending',
        error: null,
        width: null,
        height: null,
        contentType: null,
        sha256: null,
        thumbnails: null,
      });

      const token = await settled(t, org, created.id);
      expect(token.media).toMatchObject({ status: 'ok', error: null, width: 300, height: 200, contentType: type });
      expect(token.media.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      const thumbnails = token.media.thumbnails!;
      expect(Object.keys(thumbnails).sort()).toEqual(['large', 'medium', 'small']);
      for (const [name, width, height] of [
        ['small', 64, 43],
        ['medium', 256, 171],
        ['large', 300, 200],
      ] as const) {
        expect(thumbnails[name]).toMatch(
          new RegExp(
            `^http://127\\.0\\.0\\.1:\\d+/v1/media/${token.media.sha256 as string}/${name === 'small' ? 64 : name === 'medium' ? 256 : 1024}\\.webp\\?exp=\\d+&sig=[A-Za-z0-9_-]+$`,
          ),
        );
        const res = await fetchLink(t, thumbnails[name]);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe('image/webp');
        expect(res.headers['cache-control']).toBe('public, max-age=86400, immutable');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        const meta = await sharp(res.body as Buffer).metadata();
        expect([meta.format, meta.width, meta.height]).toEqual(['webp', width, height]);
      }
    });

    it('an animated GIF gives its first frame, still', async () => {
      const token = await settled(t, org, (await createToken(t, org, server.image('/animated.gif', await images.animatedGif(120, 80)))).id);
      expect(token.media).toMatchObject({ status: 'ok', contentType: 'image/gif', width: 120, height: 80 });
      const thumbnail = (await fetchLink(t, token.media.thumbnails!.medium)).body as Buffer;
      const meta = await sharp(thumbnail).metadata();
      expect(meta.pages ?? 1).toBe(1);
      const { r, b } = await dominant(thumbnail);
      expect(r).toBeGreaterThan(200);
      expect(b).toBeLessThan(50);
    });

    it('an SVG is rasterized at its intrinsic size, its script not run and its external references never fetched', async () => {
      const svg = images.svg(
        `<script>fetch('${server.url('/svg/script')}')</script>
         <style>@import url(${server.url('/svg/import.css')});</style>
         <rect width="300" height="150" fill="#ff0000"/>
         <image href="${server.url('/svg/image.png')}" width="10" height="10"/>
         <image xlink:href="${server.url('/svg/xlink.png')}" width="10" height="10"/>
         <use href="${server.url('/svg/use.svg#a')}"/>`,
      );
      server.image('/svg/image.png', await images.png(10, 10));
      server.image('/svg/xlink.png', await images.png(10, 10));
      const viewBoxOnly = images.svg('<rect width="40" height="20" fill="#0000ff"/>', 'viewBox="0 0 40 20"');
      const token = await settled(t, org, (await createToken(t, org, server.image('/picture.svg', svg, 'image/svg+xml'))).id);
      expect(token.media).toMatchObject({ status: 'ok', contentType: 'image/svg+xml', width: 300, height: 150 });
      const served = await fetchLink(t, token.media.thumbnails!.large);
      expect(served.headers['content-type']).toBe('image/webp');
      expect((await sharp(served.body as Buffer).metadata()).format).toBe('webp');
      expect(server.requests.filter((path) => path.startsWith('/svg/'))).toEqual([]);

      const fromViewBox = await settled(t, org, (await createToken(t, org, server.image('/viewbox.svg', viewBoxOnly))).id);
      expect(fromViewBox.media).toMatchObject({ status: 'ok', width: 40, height: 20 });
    });

    it('applies the EXIF orientation and strips EXIF (GPS included), XMP and ICC from every thumbnail', async () => {
      const original = await images.jpegWithExif();
      const before = await sharp(original).metadata();
      expect(before.orientation).toBe(6);
      expect(before.exif!.length).toBeGreaterThan(200);
      const token = await settled(t, org, (await createToken(t, org, server.image('/photo.jpg', original))).id);
      expect(token.media).toMatchObject({ status: 'ok', contentType: 'image/jpeg', width: 200, height: 400 });
      for (const link of Object.values(token.media.thumbnails!)) {
        const meta = await sharp((await fetchLink(t, link)).body as Buffer).metadata();
        expect({ exif: meta.exif, xmp: meta.xmp, icc: meta.icc, orientation: meta.orientation }).toEqual({
          exif: undefined,
          xmp: undefined,
          icc: undefined,
          orientation: undefined,
        });
        expect(meta.height > meta.width).toBe(true);
      }
    });

    it('decodes data: URIs (base64 or percent-encoded) and does not fetch ar://', async () => {
      const png = await images.png(20, 10);
      const base64 = await settled(t, org, (await createToken(t, org, `data:image/jpeg;base64,${png.toString('base64')}`)).id);
      expect(base64.media).toMatchObject({ status: 'ok', contentType: 'image/png', width: 20, height: 10 });
      const svg = encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="30" height="10"/>');
      const percent = await settled(t, org, (await createToken(t, org, `data:image/svg+xml,${svg}`)).id);
      expect(percent.media).toMatchObject({ status: 'ok', contentType: 'image/svg+xml', width: 30, height: 10 });
      const arweave = await settled(t, org, (await createToken(t, org, 'ar://bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U')).id);
      expect(arweave.media).toMatchObject({ status: 'failed', error: 'FETCH_FAILED', thumbnails: null, sha256: null });
    });

    it('fetches ipfs:// through IPFS_GATEWAY_URL', async () => {
      server.image(
        '/gateway/ipfs/bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/cat.png',
        await images.png(50, 50, '#123456'),
      );
      const token = await settled(
        t,
        org,
        (await createToken(t, org, 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/cat.png')).id,
      );
      expect(token.media).toMatchObject({ status: 'ok', contentType: 'image/png', width: 50, height: 50 });
    });

    it.each([
      ['HTML served as image/png', Buffer.from('<!doctype html><title>x</title>'), 'image/png'],
      [
        'a PNG signature followed by garbage',
        Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)]),
        'image/png',
      ],
      ['a BMP', Buffer.concat([Buffer.from('BM'), Buffer.alloc(64)]), 'image/bmp'],
    ])('%s is UNSUPPORTED_MEDIA, the rest of the token untouched', async (label, bytes, type) => {
      const created = await createToken(t, org, server.image(`/wrong/${encodeURIComponent(label)}`, bytes, type));
      const token = await settled(t, org, created.id);
      expect(token.media).toEqual({
        status: 'failed',
        error: 'UNSUPPORTED_MEDIA',
        width: null,
        height: null,
        contentType: null,
        sha256: null,
        thumbnails: null,
      });
      expect({ ...token, media: null }).toEqual({ ...created, media: null });
    });

    it('refuses a body over 20 MiB, declared or read (TOO_LARGE)', async () => {
      server.routes.set('/huge-declared.png', (_req, res) => res.writeHead(200, { 'content-length': String(21 * 1024 * 1024) }).end());
      let sent = 0;
      server.routes.set('/huge-streamed.png', (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        const chunk = Buffer.alloc(1024 * 1024, 1);
        const write = () => {
          while (sent < 40 && res.write(chunk)) sent++;
          if (sent < 40) res.once('drain', write);
          else res.end();
        };
        write();
      });
      const declared = await settled(t, org, (await createToken(t, org, server.url('/huge-declared.png'))).id);
      expect(declared.media).toMatchObject({ status: 'failed', error: 'TOO_LARGE' });
      const streamed = await settled(t, org, (await createToken(t, org, server.url('/huge-streamed.png'))).id);
      expect(streamed.media).toMatchObject({ status: 'failed', error: 'TOO_LARGE' });
    });

    it('gives up after 15 s on a server that trickles its answer (TIMEOUT), and retries it', async () => {
      server.routes.set('/slow.png', (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' });
        const timer = setInterval(() => res.write(Buffer.from([0x89])), 500);
        res.on('close', () => clearInterval(timer));
      });
      const created = await createToken(t, org, server.url('/slow.png'));
      const token = await settled(t, org, created.id);
      expect(token.media).toMatchObject({ status: 'failed', error: 'TIMEOUT' });
      const [row] = await sql<{ due_at: Date | null }>(t, 'select "due_at" from "token_media" where "token_id" = ?', [created.id]);
      expect(row.due_at).not.toBeNull();
    }, 90_000);

    it('follows up to 3 redirects; more is FETCH_FAILED', async () => {
      server.image('/redirected/final.png', await images.png(11, 11, '#abcdef'));
      for (let i = 1; i <= 4; i++) {
        server.routes.set(`/redirect/${i}`, (_req, res) =>
          res.writeHead(302, { location: i === 1 ? '/redirected/final.png' : `/redirect/${i - 1}` }).end(),
        );
      }
      const three = await settled(t, org, (await createToken(t, org, server.url('/redirect/3'))).id);
      expect(three.media).toMatchObject({ status: 'ok', width: 11, height: 11 });
      const four = await settled(t, org, (await createToken(t, org, server.url('/redirect/4'))).id);
      expect(four.media).toMatchObject({ status: 'failed', error: 'FETCH_FAILED' });
    });

    it('fetches an image URL once, whatever tokens or organizations use it; its thumbnails are stored once', async () => {
      const url = server.image('/shared.png', await images.png(90, 60, '#336699'));
      const other = await createOrganization(t);
      const first = await settled(t, org, (await createToken(t, org, url)).id);
      const second = await settled(t, other, (await createToken(t, other, url)).id);
      const third = await settled(t, other, (await createToken(t, other, url)).id);
      expect(server.count('/shared.png')).toBe(1);
      expect(second.media.sha256).toBe(first.media.sha256);
      expect(third.media).toMatchObject({ status: 'ok', sha256: first.media.sha256, width: 90, height: 60 });
      const stored = await sql<{ n: string }>(t, 'select count(*) as n from "media_thumbnail" where "sha256" = ?', [first.media.sha256]);
      expect(Number(stored[0].n)).toBe(3);

      // Another URL with the same bytes: fetched (it is another URL), stored once all the same.
      const copy = server.image('/shared-copy.png', await images.png(90, 60, '#336699'));
      const fourth = await settled(t, org, (await createToken(t, org, copy)).id);
      expect(fourth.media.sha256).toBe(first.media.sha256);
      expect(
        Number((await sql<{ n: string }>(t, 'select count(*) as n from "media_thumbnail" where "sha256" = ?', [first.media.sha256]))[0].n),
      ).toBe(3);
    });

    it('PATCH: a new image starts over, clearing it gives none; a refresh fetches again even a URL fetched before', async () => {
      const first = server.image('/patch/first.png', await images.png(30, 30, '#111111'));
      const second = server.image('/patch/second.png', await images.png(60, 30, '#222222'));
      const token = await settled(t, org, (await createToken(t, org, first)).id);
      const patch = (body: object) => t.http().patch(`/v1/tokens/${token.id}`).set(bearer(org.adminKey)).send(body).expect(200);

      const renamed = await patch({ metadata: { name: 'Renamed' } });
      expect(renamed.body.media).toMatchObject({ status: 'ok', width: 30 });
      expect(renamed.body.media.thumbnails.small).toContain(token.media.sha256 as string);

      expect((await patch({ metadata: { image: second } })).body.media).toMatchObject({ status: 'pending', thumbnails: null });
      expect((await settled(t, org, token.id)).media).toMatchObject({ status: 'ok', width: 60, height: 30 });

      expect((await patch({ metadata: { image: null } })).body.media).toEqual({
        status: 'none',
        error: null,
        width: null,
        height: null,
        contentType: null,
        sha256: null,
        thumbnails: null,
      });
      expect((await getToken(t, org, token.id)).media.status).toBe('none');

      await patch({ metadata: { image: first } });
      await settled(t, org, token.id);
      expect(server.count('/patch/first.png')).toBe(1);
      const refreshed = await t.http().post(`/v1/tokens/${token.id}/metadata/refresh`).set(bearer(org.adminKey)).expect(202);
      expect(refreshed.body).toEqual({ tokenId: token.id, metadataStatus: 'ok', mediaStatus: 'pending' });
      await settled(t, org, token.id, (tk) => tk.media.status === 'ok' && server.count('/patch/first.png') === 2);
    });

    it('nft-balances items carry the token with its media and links', async () => {
      const url = server.image('/held.png', await images.png(80, 40, '#445566'));
      const contract = newAddress();
      const token = await settled(t, org, (await createToken(t, org, url, contract)).id);
      const wallet = await createWallet(t, org);
      await t
        .http()
        .post('/v1/transactions')
        .set(bearer(org.adminKey))
        .send({ toWalletId: wallet, tokenId: token.id, amount: '1' })
        .expect(201);
      const page = await t.http().get(`/v2/wallets/${wallet}/nft-balances`).set(bearer(org.adminKey)).expect(200);
      const held = page.body.nftTokenBalances[0].token;
      expect(held.media).toMatchObject({ status: 'ok', width: 80, height: 40, sha256: token.media.sha256 });
      expect((await fetchLink(t, held.media.thumbnails.small)).status).toBe(200);
    });

    it('links are on the origin the request came to, as a trusted proxy tells it', async () => {
      const token = await settled(t, org, (await createToken(t, org, server.image('/origin.png', await images.png(5, 5)))).id);
      const proxied = await t
        .http()
        .get(`/v1/tokens/${token.id}`)
        .set(bearer(org.adminKey))
        .set('x-forwarded-proto', 'https')
        .set('x-forwarded-host', 'wallet.example:8443')
        .expect(200);
      expect(proxied.body.media.thumbnails.small).toMatch(/^https:\/\/wallet\.example:8443\/v1\/media\//);
    });

    it('refuses tampered, missing and expired signatures (403), and answers 404 for a rightly signed unknown image or width', async () => {
      const token = await settled(t, org, (await createToken(t, org, server.image('/signed.png', await images.png(7, 7)))).id);
      const link = new URL(token.media.thumbnails!.medium);
      const sig = link.searchParams.get('sig')!;
      const exp = Number(link.searchParams.get('exp'));
      expect(exp - Date.now() / 1000).toBeGreaterThan(86_400 - 120);
      expect(exp - Date.now() / 1000).toBeLessThanOrEqual(86_400);
      const sha = token.media.sha256 as string;
      const tampered = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
      const key = t.config.media.signingKey;
      for (const path of [
        `/v1/media/${sha}/256.webp?exp=${exp}&sig=${tampered}`,
        `/v1/media/${sha}/256.webp?exp=${exp + 1}&sig=${sig}`,
        `/v1/media/${sha}/64.webp?exp=${exp}&sig=${sig}`,
        `/v1/media/${sha}/256.webp?exp=${exp}`,
        `/v1/media/${sha}/256.webp`,
        mediaLinkPath(key, sha, 256, Math.floor(Date.now() / 1000) - 1),
        mediaLinkPath(Buffer.alloc(32, 1), sha, 256, exp),
      ]) {
        const res = await t.http().get(path);
        expectProblem(res, 403, 'MEDIA_LINK_INVALID');
        expect(res.headers['cache-control']).toBe('no-store');
      }
      expectProblem(await t.http().get(mediaLinkPath(key, 'f'.repeat(64), 256, exp)), 404, 'MEDIA_NOT_FOUND');
      expectProblem(await t.http().get(mediaLinkPath(key, sha, 128, exp)), 404, 'MEDIA_NOT_FOUND');
      expect((await t.http().get(mediaLinkPath(key, sha, 256, exp))).status).toBe(200);
    });

    it('webhooks: nft update with changes.media (no thumbnails) when it becomes ok or failed, not again when a retry ends as before', async () => {
      let failures = 2;
      const bytes = await images.png(33, 22, '#998877');
      server.routes.set('/flaky.png', (_req, res) => {
        if (failures-- > 0) return void res.writeHead(503).end('busy');
        res.writeHead(200).end(bytes);
      });
      const created = await createToken(t, org, server.url('/flaky.png'));
      const failed = await settled(t, org, created.id);
      expect(failed.media).toMatchObject({ status: 'failed', error: 'FETCH_FAILED' });
      // Retried after about 2 s (failing again, as before), then after about 10 s (ok).
      const token = await settled(t, org, created.id, (tk) => tk.media.status === 'ok');
      expect(server.count('/flaky.png')).toBe(3);
      const hooks = await waitUntil(
        () => mediaWebhooks(created.id),
        (list) => list.length >= 2,
        30_000,
      );
      expect(hooks.map((w) => (w.body as { changes: unknown }).changes)).toEqual([
        { media: { status: 'failed', error: 'FETCH_FAILED', width: null, height: null, contentType: null, sha256: null } },
        { media: { status: 'ok', error: null, width: 33, height: 22, contentType: 'image/png', sha256: token.media.sha256 } },
      ]);
      expect(hooks.map((w) => (w.body as { action: string; resourceType: string }).action)).toEqual(['update', 'update']);
      expect((hooks[0].body as { resourceType: string }).resourceType).toBe('Token');
    }, 90_000);
  });

  describe('with private networks refused (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false) and no trusted proxy', () => {
    let t: TestApp;
    let org: TestOrganization;

    beforeAll(async () => {
      t = await createTestApp({
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
        IPFS_GATEWAY_URL: `${server.origin}/gateway/ipfs/`,
        TRUST_PROXY: 'none',
      });
      org = await createOrganization(t);
    });
    afterAll(async () => {
      await t?.close();
    });

    it.each([
      ['a loopback IP', () => server.url('/private/secret.png')],
      ['a name that resolves to loopback', () => server.url('/private/secret.png').replace('127.0.0.1', 'localhost')],
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ])('refuses an image at %s without connecting (BLOCKED_BY_URL_POLICY)', async (_label, url) => {
      server.image('/private/secret.png', await images.png(4, 4));
      const before = server.count('/private/secret.png');
      const token = await settled(t, org, (await createToken(t, org, url())).id);
      expect(token.media).toMatchObject({ status: 'failed', error: 'BLOCKED_BY_URL_POLICY' });
      expect(server.count('/private/secret.png')).toBe(before);
    });

    it('uses the operator’s gateway, but checks a redirect away from it like any URL', async () => {
      server.image('/gateway/ipfs/bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', await images.png(9, 9));
      const viaGateway = await settled(
        t,
        org,
        (await createToken(t, org, 'ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy')).id,
      );
      expect(viaGateway.media).toMatchObject({ status: 'ok', width: 9 });

      server.image('/private/after-redirect.png', await images.png(4, 4));
      server.routes.set('/gateway/ipfs/bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku/away.png', (_req, res) =>
        res.writeHead(302, { location: server.url('/private/after-redirect.png').replace('127.0.0.1', 'localhost') }).end(),
      );
      const redirected = await settled(
        t,
        org,
        (await createToken(t, org, 'ipfs://bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku/away.png')).id,
      );
      expect(redirected.media).toMatchObject({ status: 'failed', error: 'BLOCKED_BY_URL_POLICY' });
      expect(server.count('/private/after-redirect.png')).toBe(0);
    });

    it('ignores X-Forwarded-* from a peer that is not a trusted proxy', async () => {
      const token = await settled(
        t,
        org,
        (await createToken(t, org, 'ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy')).id,
      );
      const res = await t
        .http()
        .get(`/v1/tokens/${token.id}`)
        .set(bearer(org.adminKey))
        .set('x-forwarded-proto', 'https')
        .set('x-forwarded-host', 'attacker.example')
        .expect(200);
      expect(res.body.media.thumbnails.small).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/media\//);
    });
  });

  describe('fairness and storage in a directory', () => {
    let t: TestApp;
    let directory: string;

    beforeAll(async () => {
      directory = join(await mkdtemp(join(tmpdir(), 'nftw-media-')), 'created', 'here');
      t = await createTestApp({ MEDIA_STORAGE: directory });
    });
    afterAll(async () => {
      await t?.close();
      await rm(join(directory, '..', '..'), { recursive: true, force: true });
    });

    it('keeps thumbnails in MEDIA_STORAGE (created if missing) and serves them from there', async () => {
      const org = await createOrganization(t);
      const token = await settled(t, org, (await createToken(t, org, server.image('/dir.png', await images.png(70, 35, '#00aa00')))).id);
      expect(token.media).toMatchObject({ status: 'ok', width: 70, height: 35 });
      const sha = token.media.sha256 as string;
      expect((await readdir(join(directory, sha.slice(0, 2)))).sort()).toEqual([`${sha}-1024.webp`, `${sha}-256.webp`, `${sha}-64.webp`]);
      expect(await sql(t, 'select 1 from "media_thumbnail" where "sha256" = ?', [sha])).toEqual([]);
      const res = await fetchLink(t, token.media.thumbnails!.small);
      expect(res.status).toBe(200);
      const { r, g } = await dominant(res.body as Buffer);
      expect(g).toBeGreaterThan(150);
      expect(r).toBeLessThan(50);
    });

    it('one organization’s images that never answer do not hold back another’s', async () => {
      const hostile = await createOrganization(t);
      const patient = await createOrganization(t);
      // Accepted and never answered: each holds a fetch for its whole 15 s.
      for (let i = 0; i < 20; i++) server.routes.set(`/hang?${i}`, () => undefined);
      for (let i = 0; i < 20; i++) await createToken(t, hostile, server.url(`/hang?${i}`));
      await waitUntil(
        () => server.requests.filter((p) => p.startsWith('/hang')).length,
        (n) => n >= 4,
        15_000,
      );
      const token = await createToken(t, patient, server.image('/patient.png', await images.png(8, 8)));
      const done = await waitUntil(
        () => getToken(t, patient, token.id),
        (tk) => tk.media.status === 'ok',
        10_000,
      );
      expect(done.media).toMatchObject({ status: 'ok', width: 8 });
    });
  });
});
