/// <reference lib="dom" />
// The page callbacks below run in the browser, hence the DOM types for this file.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import { bearer, createApiKey, createOrganization, TestOrganization } from './support/factories';
import { TestReceiver, waitUntil } from './support/receiver';
import { nftApi } from './support/nft';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, WEBHOOKS_PATH } from './support/webhooks';

/**
 * CONTRACT.md section 14 in a real browser: headless Chromium (the Debian package, which .ci/run
 * installs) drives the page the service serves, against the real app listening on loopback and
 * a real webhook receiver. Screenshots land in temp/screenshots (git-ignored).
 */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = resolve(__dirname, '../temp/screenshots');
const KEY_STORAGE = 'portal.apiKey';
const SECRET = 'portal-shared-secret-0123456789';
/** Buttons that change something; an auditor must see none of them. */
const WRITE_CONTROLS = ['Redeliver', 'Send test', 'Rotate secret', 'Replay'];

describe('portal in a real browser', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let browser: Browser;
  let userDataDir: string;
  let base: string;
  let org: TestOrganization;
  let auditorKey: string;
  let readKey: string;
  /** Everything the browser complained about (CSP violations, script errors), per page. */
  const complaints: string[] = [];
  /** Every URL the browser asked for, to prove nothing comes from outside the service. */
  const requested: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    receiver = await new TestReceiver().start();
    org = await createOrganization(t);
    auditorKey = (await createApiKey(t, org.id, ['auditor'])).key;
    readKey = (await createApiKey(t, org.id, ['read'])).key;
    await configureWebhooks(t, org, { url: receiver.url, sharedSecret: SECRET });
    mkdirSync(SCREENSHOTS, { recursive: true });
    userDataDir = mkdtempSync(join(tmpdir(), 'portal-chromium-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await receiver?.stop();
    await t?.close();
  });

  beforeEach(() => {
    complaints.length = 0;
    requested.length = 0;
  });

  afterEach(() => {
    expect(complaints).toEqual([]);
    // Chromium draws some form controls with its own data: images; nothing else leaves the service.
    expect(requested.filter((url) => !url.startsWith('data:') && !url.startsWith(`${base}/`))).toEqual([]);
  });

  async function openPortal(width = 1280, height = 900): Promise<Page> {
    const page = await browser.newPage();
    await page.setViewport({ width, height });
    page.on('console', (message) => {
      // A refused API call is logged by the browser too; each test checks what the page shows for those.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        complaints.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && !new URL(response.url()).pathname.startsWith('/api/')) {
        complaints.push(`${response.status()} for ${response.url()}`);
      }
    });
    page.on('pageerror', (error) => complaints.push(`page error: ${error instanceof Error ? error.message : String(error)}`));
    page.on('request', (request) => requested.push(request.url()));
    const answer = await page.goto(`${base}/portal`, { waitUntil: 'load' });
    // 304 when the browser revalidates its cached copy (the assets are served with no-cache and an ETag).
    expect([200, 304]).toContain(answer?.status());
    return page;
  }

  /** Signs in with the keyboard only: the key field has focus on arrival, Enter submits. */
  async function signIn(page: Page, key: string): Promise<void> {
    await page.waitForFunction(() => document.activeElement?.id === 'api-key');
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
  }

  async function signedIn(page: Page): Promise<void> {
    await page.waitForSelector('#app-view:not([hidden])');
    await page.waitForSelector('#log-table[data-loaded="true"]');
  }

  /** Presses Tab until the element matching `selector` has focus: proof it is reachable by keyboard. */
  async function tabTo(page: Page, selector: string): Promise<void> {
    for (let presses = 0; presses < 80; presses += 1) {
      if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
      await page.keyboard.press('Tab');
    }
    throw new Error(`${selector} is not reachable with the Tab key`);
  }

  const visibleButtons = (page: Page) =>
    page.$$eval('button', (buttons) => buttons.filter((b) => b.offsetParent !== null).map((b) => (b.textContent ?? '').trim()));

  /** Writes a wallet and waits until its webhook reached the receiver; answers the webhook's id. */
  async function deliveredWebhook(name: string): Promise<string> {
    const walletId = await createWallet(t, org, name);
    const log = await waitUntil(
      () => t.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.some((w: { resourceId: string; status: string }) => w.resourceId === walletId && w.status === 'succeeded'),
    );
    return log.body.webhooks.find((w: { resourceId: string }) => w.resourceId === walletId).id;
  }

  const rowOf = (page: Page, webhookId: string) => page.waitForSelector(`#log-table tbody tr[data-id="${webhookId}"]`);

  it('signs an admin in, shows a new webhook after a write, its attempts, and a redelivery as a new attempt', async () => {
    const page = await openPortal();
    await signIn(page, org.adminKey);
    await signedIn(page);
    expect(await page.evaluate((name) => sessionStorage.getItem(name), KEY_STORAGE)).toBe(org.adminKey);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.cookies()).toEqual([]);
    expect(await page.$eval('#who-role', (e) => e.textContent)).toBe('admin');

    // A write elsewhere; the portal shows its webhook on the next refresh.
    await createWallet(t, org, 'seen in the portal');
    const delivered = await waitUntil(
      () => t.http().get(WEBHOOKS_PATH).set(bearer(org.adminKey)),
      (res) =>
        res.body.webhooks.some((w: { resourceType: string; status: string }) => w.resourceType === 'Wallet' && w.status === 'succeeded'),
    );
    const webhook = delivered.body.webhooks.find((w: { resourceType: string }) => w.resourceType === 'Wallet');
    await page.click('#log-refresh');
    const row = await rowOf(page, webhook.id);
    expect(await row!.evaluate((r) => r.textContent)).toContain('Wallet create');
    expect(await row!.evaluate((r) => r.querySelector('.pill')?.textContent)).toBe('succeeded');

    // Its attempts, as a timeline, opened with the keyboard alone.
    await tabTo(page, `button[data-id="${webhook.id}"]`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#detail:not([hidden]) #attempts li[data-attempt="1"]');
    expect(await page.$eval('#detail-title', (e) => e.textContent)).toBe(`Webhook ${webhook.id}`);
    const first = await page.$eval('#attempts li[data-attempt="1"]', (e) => e.textContent ?? '');
    expect(first).toMatch(/^Attempt 1 · .+ · HTTP 200 · \d+ ms$/);
    expect(JSON.parse(await page.$eval('#payload', (e) => e.textContent ?? ''))).toMatchObject({
      id: webhook.id,
      resourceType: 'Wallet',
      action: 'create',
    });
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-admin-1280.png'), fullPage: true });

    // Redeliver: the receiver gets the same id again and the timeline grows by one attempt.
    const receivedBefore = receiver.received.filter((w) => w.body.id === webhook.id).length;
    await tabTo(page, '#redeliver');
    await page.keyboard.press('Enter');
    // The page watches the webhook until the new attempt has its answer and says so.
    await page.waitForFunction(
      (id) => document.getElementById('status')?.textContent === `Webhook ${id} redelivered: attempt 2 recorded.`,
      { timeout: 30_000 },
      webhook.id,
    );
    expect(await page.$eval('#attempts li[data-attempt="2"]', (e) => e.textContent ?? '')).toMatch(/^Attempt 2 · .+ · HTTP 200 · \d+ ms$/);
    expect(await page.$eval('#detail-facts .pill', (e) => e.textContent)).toBe('succeeded');
    expect(receiver.received.filter((w) => w.body.id === webhook.id).length).toBe(receivedBefore + 1);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-redelivered-1280.png'), fullPage: true });
    await page.close();
  });

  it('shows what a failing receiver answered on every attempt, and a redelivery that succeeds once it recovers', async () => {
    let failing = true;
    receiver.behaviour = (_, webhook) => ({ status: failing && webhook.body.resourceType === 'Token' ? 500 : 200 });
    const token = await nftApi(t, org.adminKey).token();
    const failed = await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?status=failed`).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.some((w: { resourceId: string }) => w.resourceId === token.id),
    );
    const webhook = failed.body.webhooks.find((w: { resourceId: string }) => w.resourceId === token.id);
    // The test schedule has three retries: four attempts in all.
    expect(webhook).toMatchObject({ status: 'failed', attemptCount: 4, lastResponseStatus: 500 });

    const page = await openPortal();
    await signIn(page, org.adminKey);
    await signedIn(page);
    await page.select('#filter-status', 'failed');
    await page.click('#filter-form button[type="submit"]');
    const row = await rowOf(page, webhook.id);
    expect(await row!.$$eval('td', (cells) => cells.map((c) => c.textContent))).toEqual([
      expect.any(String),
      'nft',
      'Token create',
      'failed',
      '4',
      '500',
      '—',
      'Attempts',
    ]);
    await page.click(`button[data-id="${webhook.id}"]`);
    await page.waitForSelector('#attempts li[data-attempt="4"]');
    const attempts = await page.$$eval('#attempts li', (items) => items.map((i) => [i.className, i.textContent ?? '']));
    expect(attempts).toHaveLength(4);
    for (const [className, text] of attempts) {
      expect(className).toBe('bad');
      expect(text).toMatch(/^Attempt \d · .+ · HTTP 500 · \d+ ms/);
    }

    await page.screenshot({ path: join(SCREENSHOTS, 'portal-failed-1280.png'), fullPage: true });

    failing = false;
    await page.click('#redeliver');
    await page.waitForFunction(
      (id) => document.getElementById('status')?.textContent === `Webhook ${id} redelivered: attempt 5 recorded.`,
      { timeout: 30_000 },
      webhook.id,
    );
    expect(await page.$eval('#attempts li[data-attempt="5"]', (e) => e.textContent ?? '')).toMatch(/^Attempt 5 · .+ · HTTP 200 · \d+ ms$/);
    expect(await page.$eval('#detail-facts .pill', (e) => e.textContent)).toBe('succeeded');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-failed-then-redelivered-1280.png'), fullPage: true });
    receiver.behaviour = () => ({ status: 200 });
    await page.close();
  });

  it('filters the log by status and type, and pages through it', async () => {
    for (let i = 0; i < 11; i += 1) await createWallet(t, org, `wallet ${i}`);
    await waitUntil(
      () => t.http().get(`${WEBHOOKS_PATH}?status=succeeded`).set(bearer(org.adminKey)),
      (res) => res.body.webhooks.length >= 11,
    );
    const page = await openPortal();
    await signIn(page, org.adminKey);
    await signedIn(page);

    // Nothing in this service produces kyc webhooks.
    await page.select('#filter-type', 'kyc');
    await page.click('#filter-form button[type="submit"]');
    await page.waitForSelector('#log-empty:not([hidden])');
    expect(await page.$$('#log-table tbody tr')).toHaveLength(0);

    await page.select('#filter-type', 'custodialAccount');
    await page.select('#filter-status', 'succeeded');
    await page.select('#filter-page-size', '25');
    await page.click('#filter-form button[type="submit"]');
    await page.waitForSelector('#log-table tbody tr');
    const statuses = await page.$$eval('#log-table tbody .pill', (pills) => pills.map((p) => p.textContent));
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    expect(new Set(statuses)).toEqual(new Set(['succeeded']));
    // Every control has a label a screen reader announces.
    const unlabelled = await page.$$eval('input, select', (controls) =>
      controls.filter((c) => (c as HTMLInputElement).labels?.length === 0 && !c.getAttribute('aria-label')).map((c) => c.id),
    );
    expect(unlabelled).toEqual([]);

    // Paging follows nextPageKey, ten webhooks a page.
    const all = (await t.http().get(`${WEBHOOKS_PATH}?status=succeeded&pageSize=10`).set(bearer(org.adminKey)).expect(200)).body;
    expect(all.nextPageKey).not.toBeNull();
    await page.select('#filter-type', '');
    await page.select('#filter-page-size', '10');
    await page.click('#filter-form button[type="submit"]');
    await page.waitForFunction(
      () =>
        document.getElementById('page-label')?.textContent === 'Page 1' &&
        !(document.getElementById('page-older') as HTMLButtonElement).disabled,
    );
    const firstPage = await page.$$eval('#log-table tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.id));
    expect(firstPage).toEqual(all.webhooks.map((w: { id: string }) => w.id));
    await page.click('#page-older');
    await page.waitForFunction(() => document.getElementById('page-label')?.textContent === 'Page 2');
    const secondPage = await page.$$eval('#log-table tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.id));
    expect(secondPage.length).toBeGreaterThan(0);
    expect(secondPage.filter((id) => firstPage.includes(id))).toEqual([]);
    await page.click('#page-newer');
    await page.waitForFunction(() => document.getElementById('page-label')?.textContent === 'Page 1');
    await page.close();
  });

  it('shows the configuration and its endpoints, sends a test webhook, and shows statistics or says they are missing', async () => {
    const page = await openPortal();
    await signIn(page, org.adminKey);
    await signedIn(page);
    await page.click('.tabs button[data-view="config"]');
    await page.waitForSelector('#config-view:not([hidden]) #config dd');
    expect(await page.$eval('#config', (e) => e.textContent)).toContain(receiver.url);
    // The default endpoint is listed whether or not the server has the endpoints API.
    await page.waitForFunction(
      (url) => Array.from(document.querySelectorAll('#endpoints-table tbody tr')).some((r) => r.textContent?.startsWith(`${url}yes`)),
      {},
      receiver.url,
    );

    await page.select('#test-type', 'nft');
    await page.click('#test-form button[type="submit"]');
    await page.waitForFunction(() => /^Test webhook \S+ queued/.test(document.getElementById('status')?.textContent ?? ''));
    const testId = (await page.$eval('#status', (e) => e.textContent ?? '')).split(' ')[2];
    const received = await waitUntil(
      () => receiver.received.find((w) => w.body.id === testId),
      (w) => w !== undefined,
    );
    expect(received!.body).toMatchObject({ resourceType: 'WebhookTest', action: 'test' });

    // Statistics: a chart when the server answers the statistics API, a plain note when it has none.
    const stats = await t.http().get(`${WEBHOOKS_PATH}/stats`).set(bearer(org.adminKey));
    await page.click('.tabs button[data-view="stats"]');
    // Without it, `stats` is read as a webhook id by GET …/webhooks/{webhookId}.
    if (
      (stats.status === 404 && stats.body.code === 'ROUTE_NOT_FOUND') ||
      (stats.status === 400 && stats.body.code === 'INVALID_PATH_PARAMETER')
    ) {
      await page.waitForSelector('#stats-note:not([hidden])');
      expect(await page.$eval('#stats-note', (e) => e.textContent)).toBe('Delivery statistics are not available on this server.');
      expect(await page.$$('#chart canvas')).toHaveLength(0);
    } else {
      expect(stats.status).toBe(200);
      await page.waitForSelector('#chart canvas');
    }
    await page.close();
  });

  it('shows an auditor everything but no control that changes anything', async () => {
    const someId = await deliveredWebhook('seen by the auditor');
    const page = await openPortal();
    await signIn(page, auditorKey);
    await signedIn(page);
    expect(await page.$eval('#who-role', (e) => e.textContent)).toBe('auditor');
    await rowOf(page, someId);
    await page.click(`button[data-id="${someId}"]`);
    await page.waitForSelector('#detail:not([hidden]) #attempts li');
    const onLog = await visibleButtons(page);
    expect(onLog).toEqual(expect.arrayContaining(['Sign out', 'Attempts']));
    await page.click('.tabs button[data-view="config"]');
    await page.waitForSelector('#config-view:not([hidden]) #config dd');
    const onConfig = await visibleButtons(page);
    for (const control of WRITE_CONTROLS) {
      expect(onLog).not.toContain(control);
      expect(onConfig).not.toContain(control);
    }
    // Not merely hidden by style: no write form is reachable by keyboard either.
    const reachable = await page.$$eval('#redeliver, #test-form button, #rotate-form button, #replay-form button', (buttons) =>
      buttons.filter((b) => (b as HTMLElement).offsetParent !== null),
    );
    expect(reachable).toHaveLength(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-auditor-1280.png'), fullPage: true });
    await page.close();
  });

  it('refuses a wrong key and a key without the admin or auditor role, with a visible error', async () => {
    const page = await openPortal();
    await signIn(page, 'nftw_this-key-does-not-exist-at-all-0123456789');
    await page.waitForFunction(() => (document.getElementById('sign-in-error')?.textContent ?? '') !== '');
    expect(await page.$eval('#sign-in-error', (e) => e.textContent)).toMatch(
      /^This API key was refused: .+\((INVALID_API_KEY|UNAUTHENTICATED)\)$/,
    );
    expect(await page.$eval('#app-view', (e) => (e as HTMLElement).hidden)).toBe(true);
    expect(await page.evaluate((name) => sessionStorage.getItem(name), KEY_STORAGE)).toBeNull();

    await page.$eval('#api-key', (input) => ((input as HTMLInputElement).value = ''));
    await page.focus('#api-key');
    await page.keyboard.type(readKey);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /admin nor the auditor/.test(document.getElementById('sign-in-error')?.textContent ?? ''));
    expect(await page.evaluate((name) => sessionStorage.getItem(name), KEY_STORAGE)).toBeNull();
    await page.close();
  });

  it('signs out: the key leaves sessionStorage and a reload stays signed out', async () => {
    const page = await openPortal();
    await signIn(page, org.adminKey);
    await signedIn(page);
    // A reload of the same tab keeps the session.
    await page.reload({ waitUntil: 'load' });
    await signedIn(page);
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in-view:not([hidden])');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.$eval('#app-view', (e) => (e as HTMLElement).hidden)).toBe(true);
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => document.activeElement?.id === 'api-key');
    expect(await page.$eval('#app-view', (e) => (e as HTMLElement).hidden)).toBe(true);
    await page.close();
  });

  it('fits a 390 px wide screen without sideways scrolling, in every view', async () => {
    const someId = await deliveredWebhook('seen on a phone');
    const page = await openPortal(390, 844);
    /** Elements past the right edge or scrolling sideways inside (tables become cards here). */
    const overflow = () =>
      page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const outside = Array.from(document.querySelectorAll('body *'))
          .filter((e) => e.getBoundingClientRect().right > width + 0.5 || e.scrollWidth > e.clientWidth + 1)
          // Only the body as sent may scroll inside its own box (a long line of JSON).
          .filter((e) => e.id !== 'payload' && (e as HTMLElement).offsetParent !== null)
          // Text for screen readers only sits in a clipped 1 px box.
          .filter((e) => !e.closest('.sr-only, table.cards thead'))
          .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`);
        return { scrolls: document.documentElement.scrollWidth > width, outside };
      });
    const fits = { scrolls: false, outside: [] };
    expect(await overflow()).toEqual(fits);
    await signIn(page, org.adminKey);
    await signedIn(page);
    await rowOf(page, someId);
    await page.click(`button[data-id="${someId}"]`);
    await page.waitForSelector('#detail:not([hidden]) #attempts li');
    expect(await overflow()).toEqual(fits);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-log-390.png'), fullPage: true });
    for (const view of ['config', 'stats']) {
      await page.click(`.tabs button[data-view="${view}"]`);
      await page.waitForSelector(`#${view}-view:not([hidden])`);
      expect(await overflow()).toEqual(fits);
    }
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-stats-390.png'), fullPage: true });
    await page.close();
  });

  it('serves the page with nothing inline, so the strict CSP needs no exception', async () => {
    const html = await t
      .http()
      .get('/portal')
      .expect(200)
      .expect('content-type', /text\/html/);
    expect(html.headers['content-security-policy']).toContain("script-src 'self';");
    expect(html.headers['content-security-policy']).not.toContain('unsafe-eval');
    expect(html.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html.text).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    for (const asset of ['/portal/portal.js', '/portal/portal.css', '/portal/uplot.js', '/portal/uplot.css']) {
      const res = await t.http().get(asset).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/(javascript|css); charset=utf-8$/);
    }
  });
});
