/// <reference lib="dom" />
// The page callbacks below run in the browser, hence the DOM types for this file.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer, { Browser, Page } from 'puppeteer-core';
import sharp from 'sharp';
import { getAddress } from 'viem';
import { bearer, createApiKey, createOrganization, TestOrganization } from './support/factories';
import { Behaviour, ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { nftApi } from './support/nft';
import { makePki } from './support/pki';
import { createTestApp, TestApp } from './support/test-app';
import { configureWebhooks, createWallet, signatureIsValid, WEBHOOKS_PATH } from './support/webhooks';

/**
 * docs/PORTAL.md "Portal" in a real browser: headless Chromium (the Debian package, which .ci/run
 * installs) drives the page the service serves, against the real app listening on loopback and
 * a real webhook receiver. Screenshots land in temp/screenshots (git-ignored).
 */
const CHROMIUM = '/usr/bin/chromium';
const checksumOf = (address: string) => getAddress(address);
const SCREENSHOTS = resolve(__dirname, '../temp/screenshots');
const KEY_STORAGE = 'portal.apiKey';
const SECRET = 'portal-shared-secret-0123456789';
const SECOND_SECRET = 'portal-second-endpoint-secret-0123';
const ENDPOINTS_PATH = '/api/organization/v1/current-organization/webhook-endpoints';
const CONTRACT = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
/** Buttons that change something; an auditor must see none of them. */
const WRITE_CONTROLS = [
  'Redeliver',
  'Send test',
  'Rotate secret',
  'Disable endpoint',
  'Enable endpoint',
  'Edit endpoint',
  'Add endpoint',
  'Save changes',
  'Test',
  'Replay',
];
/** The forms and buttons behind those controls: none may be shown to an auditor, nor reachable by keyboard. */
const WRITE_SELECTORS = '#redeliver, #test-form, #rotate-form, #endpoint-toggle, #endpoint-edit, #create-form, #replay-form, #secret-box';
/** A bucket of GET …/webhooks/stats (docs/WEBHOOKS.md "Delivery statistics"). */
interface StatsBucket {
  startUtc: string;
  succeeded: number;
  failed: number;
  retried: number;
  p50Ms: number | null;
  p99Ms: number | null;
}
/** The receiver answers 200, except 500 on the paths a test lists here. */
const failingPaths = new Set<string>();
const healthy: Behaviour = (_, webhook) => ({ status: failingPaths.has(webhook.path) ? 500 : 200 });

describe('portal in a real browser', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let browser: Browser;
  let userDataDir: string;
  let base: string;
  let org: TestOrganization;
  let readKey: string;
  /** Everything the browser complained about (CSP violations, script errors), per page. */
  const complaints: string[] = [];
  /** Every URL the browser asked for, to prove nothing comes from outside the service. */
  const requested: string[] = [];

  beforeAll(async () => {
    // An endpoint whose every attempt failed for 2 s (with at least ten failed webhooks) is
    // switched off, so the portal can show one; no other test fails ten webhooks of one endpoint.
    // Replays may queue 15 webhooks an hour per organization: room for the replay of a dozen
    // below, and not for the 16 of the refused one.
    t = await createTestApp({ WEBHOOK_AUTO_DISABLE_AFTER: '2s', WEBHOOK_REPLAYS_PER_HOUR: '15' });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    receiver = await new TestReceiver().start();
    receiver.behaviour = healthy;
    org = await createOrganization(t);
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
    failingPaths.clear();
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
      // API answers (refusals included) are the page's to show; each test checks what it shows.
      if (response.status() >= 400 && !/^\/(api|v1|v2)\//.test(new URL(response.url()).pathname)) {
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

  /**
   * Waits for the signed-in page, which lands on its first tab (Endpoints), then opens the
   * delivery log, where most tests continue.
   */
  async function signedIn(page: Page): Promise<void> {
    await page.waitForSelector('#app-view:not([hidden])');
    expect(await page.$eval('.tabs button[aria-current="page"]', (b) => (b as HTMLElement).dataset.view)).toBe('endpoints');
    expect(await page.$eval('#endpoints-view', (v) => (v as HTMLElement).hidden)).toBe(false);
    expect(await page.$eval('#log-view', (v) => (v as HTMLElement).hidden)).toBe(true);
    await page.click('.tabs button[data-view="log"]');
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
  async function deliveredWebhook(name: string, of: TestOrganization = org): Promise<string> {
    const walletId = await createWallet(t, of, name);
    const log = await waitUntil(
      () => t.http().get(WEBHOOKS_PATH).set(bearer(of.adminKey)),
      (res) => res.body.webhooks.some((w: { resourceId: string; status: string }) => w.resourceId === walletId && w.status === 'succeeded'),
    );
    return log.body.webhooks.find((w: { resourceId: string }) => w.resourceId === walletId).id;
  }

  const rowOf = (page: Page, webhookId: string) => page.waitForSelector(`#log-table tbody tr[data-id="${webhookId}"]`);

  interface TwoEndpoints {
    org: TestOrganization;
    defaultUrl: string;
    secondId: string;
    secondUrl: string;
  }

  /**
   * A fresh organization (its own send limit and statistics) whose default endpoint and a second
   * one, added over the API, are paths of the same receiver: `/{name}/default`, `/{name}/second`.
   * Both receive custodialAccount (wallet) webhooks unless told otherwise.
   */
  async function organizationWithTwoEndpoints(
    name: string,
    second: { webhookTypes?: string[]; description?: string; contractAddresses?: string[] } = {},
  ): Promise<TwoEndpoints> {
    const created = await createOrganization(t);
    const defaultUrl = receiver.urlFor(`/${name}/default`);
    const secondUrl = receiver.urlFor(`/${name}/second`);
    await configureWebhooks(t, created, { url: defaultUrl, sharedSecret: SECRET, webhookTypes: ['custodialAccount'] });
    const added = await t
      .http()
      .post(ENDPOINTS_PATH)
      .set(bearer(created.adminKey))
      .send({
        url: secondUrl,
        sharedSecret: SECOND_SECRET,
        webhookTypes: second.webhookTypes ?? ['custodialAccount'],
        ...(second.description ? { description: second.description } : {}),
        ...(second.contractAddresses ? { filters: { contractAddresses: second.contractAddresses } } : {}),
      })
      .expect(201);
    return { org: created, defaultUrl, secondId: added.body.id, secondUrl };
  }

  const endpointOverApi = async (of: TestOrganization, id: string) =>
    (await t.http().get(`${ENDPOINTS_PATH}/${id}`).set(bearer(of.adminKey)).expect(200)).body;

  /** Every webhook of an organization's log for one endpoint (one page: the tests make fewer than 100). */
  const webhooksOf = async (of: TestOrganization, endpointId: string, status = '') =>
    (
      await t
        .http()
        .get(`${WEBHOOKS_PATH}?endpointId=${endpointId}&pageSize=100${status ? `&status=${status}` : ''}`)
        .set(bearer(of.adminKey))
        .expect(200)
    ).body.webhooks as { id: string; status: string; attemptCount: number; endpointId: string; resourceId: string }[];

  /** Opens the Endpoints view and waits until it lists `count` endpoints. */
  async function showEndpoints(page: Page, count: number): Promise<void> {
    await page.click('.tabs button[data-view="endpoints"]');
    await page.waitForFunction(
      (n) =>
        document.querySelectorAll('#endpoints-table tbody tr').length === n &&
        !document.getElementById('endpoints-table')?.hasAttribute('aria-busy'),
      {},
      count,
    );
  }

  /** The cells of an endpoint's row, by column name. */
  const endpointRow = (page: Page, id: string) =>
    page.$eval(`#endpoints-table tbody tr[data-id="${id}"]`, (row) =>
      Object.fromEntries(Array.from(row.querySelectorAll('td')).map((td) => [td.dataset.label, td.textContent ?? ''])),
    );

  const statusLine = (page: Page) => page.$eval('#status', (e) => e.textContent ?? '');

  /** The open endpoint's details, by term. */
  const endpointFacts = (page: Page) =>
    page.$eval('#endpoint-facts', (dl) =>
      Object.fromEntries(Array.from(dl.querySelectorAll('dt')).map((dt) => [dt.textContent, dt.nextElementSibling?.textContent ?? ''])),
    );

  /** Replaces what a text field holds, as pasting over it would. */
  const setText = (page: Page, selector: string, text: string) =>
    page.$eval(selector, (field, value) => ((field as HTMLInputElement | HTMLTextAreaElement).value = value), text);

  /** The problems the form shows under the block of one field (`data-field`). */
  const fieldProblems = (page: Page, field: string) =>
    page.$eval(`#create-form [data-field="${field}"]`, (block) => block.querySelector('.field-error')?.textContent ?? '');

  /** Sets a datetime-local field to an instant, in the browser's own time zone. */
  const setLocalTime = (page: Page, selector: string, instant: Date) =>
    page.$eval(
      selector,
      (input, ms) => {
        const offset = new Date(ms).getTimezoneOffset() * 60_000;
        (input as HTMLInputElement).value = new Date(ms - offset).toISOString().slice(0, 16);
      },
      instant.getTime(),
    );

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
    // The receiver's answer ("ok") follows the attempt's line.
    expect(first).toMatch(/^Attempt 1 · .+ · HTTP 200 · \d+ msok$/);
    expect(await page.$eval('#attempts li[data-attempt="1"] .response-body', (e) => e.textContent)).toBe('ok');
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
    expect(await page.$eval('#attempts li[data-attempt="2"]', (e) => e.textContent ?? '')).toMatch(
      /^Attempt 2 · .+ · HTTP 200 · \d+ msok$/,
    );
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
      `${receiver.url} (default)`,
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
    expect(await page.$eval('#attempts li[data-attempt="5"]', (e) => e.textContent ?? '')).toMatch(
      /^Attempt 5 · .+ · HTTP 200 · \d+ msok$/,
    );
    expect(await page.$eval('#detail-facts .pill', (e) => e.textContent)).toBe('succeeded');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-failed-then-redelivered-1280.png'), fullPage: true });
    receiver.behaviour = healthy;
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
    const unlabelled = await page.$$eval('input, select, textarea', (controls) =>
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

  it('lists every endpoint, sends a test webhook to the second one, and filters the log by endpoint', async () => {
    const {
      org: multi,
      defaultUrl,
      secondId,
      secondUrl,
    } = await organizationWithTwoEndpoints('multi', {
      webhookTypes: ['nft', 'custodialAccount'],
      description: 'Data warehouse',
      contractAddresses: [CONTRACT],
    });
    // One write: a webhook to each endpoint (custodialAccount is not filtered by contract).
    const walletId = await createWallet(t, multi, 'sent to both endpoints');
    await receiver.waitFor((r) =>
      [defaultUrl, secondUrl].every((url) => r.some((w) => url.endsWith(w.path) && w.body.resourceId === walletId)),
    );

    const page = await openPortal();
    await signIn(page, multi.adminKey);
    await signedIn(page);
    await showEndpoints(page, 2);
    // The default endpoint first, marked as such; then the second, as added over the API.
    expect(await page.$$eval('#endpoints-table tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.id))).toEqual([
      multi.id,
      secondId,
    ]);
    expect(await endpointRow(page, multi.id)).toEqual({
      Endpoint: `${defaultUrl}default`,
      Types: 'custodialAccount',
      Filters: 'none',
      Status: 'enabled',
      'Shared secret': 'set',
      '': 'Details',
    });
    expect(await page.$$('#endpoints-table tbody tr [data-default]')).toHaveLength(1);
    expect(await endpointRow(page, secondId)).toEqual({
      Endpoint: `${secondUrl}Data warehouse`,
      Types: 'nft, custodialAccount',
      Filters: `nft and transaction of 1 contract: ${CONTRACT}`,
      Status: 'enabled',
      'Shared secret': 'set',
      '': 'Details',
    });

    // The second endpoint's details, opened with the keyboard, and a test send to it alone.
    await tabTo(page, `button[data-endpoint="${secondId}"]`);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`#endpoint-detail[data-id="${secondId}"]:not([hidden])`);
    expect(await page.$eval('#endpoint-title', (e) => e.textContent)).toBe('Endpoint Data warehouse');
    expect(await page.$eval('#endpoint-facts', (e) => e.textContent)).toContain(`Contracts${CONTRACT}`);
    await page.select('#test-type', 'nft');
    await tabTo(page, '#test-form button[type="submit"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() =>
      /^Test webhook \S+ queued for Data warehouse: /.test(document.getElementById('status')?.textContent ?? ''),
    );
    const testId = (await statusLine(page)).split(' ')[2];
    const [received] = await receiver
      .waitFor((r) => r.some((w) => w.body.id === testId))
      .then((r) => r.filter((w) => w.body.id === testId));
    expect(received.path).toBe('/multi/second');
    expect(received.body).toMatchObject({ resourceType: 'WebhookTest', action: 'test' });
    expect(signatureIsValid(received, SECOND_SECRET)).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-endpoints-1280.png'), fullPage: true });

    // The log, filtered by that endpoint: its test webhook and its wallet webhook, nothing of the default endpoint.
    const defaultWebhooks = await webhooksOf(multi, multi.id);
    expect(defaultWebhooks).toHaveLength(1);
    await page.click('.tabs button[data-view="log"]');
    await page.select('#filter-endpoint', secondId);
    await page.click('#filter-form button[type="submit"]');
    // The filtered answer, not an earlier unfiltered one: the log is no longer busy and shows the test webhook.
    await page.waitForSelector(`#log-table:not([aria-busy]) tbody tr[data-id="${testId}"]`);
    const rows = await page.$$eval('#log-table tbody tr', (trs) =>
      trs.map((r) => ({
        id: (r as HTMLElement).dataset.id,
        endpointId: (r as HTMLElement).dataset.endpoint,
        endpoint: r.querySelector('td[data-label="Endpoint"]')?.textContent,
        resource: r.querySelector('td[data-label="Resource"]')?.textContent,
      })),
    );
    expect(rows.map((r) => r.resource).sort()).toEqual(['Wallet create', 'WebhookTest test']);
    for (const row of rows) expect(row).toMatchObject({ endpointId: secondId, endpoint: 'Data warehouse' });
    expect(rows.map((r) => r.id)).not.toContain(defaultWebhooks[0].id);

    // Without the filter, each entry names its own endpoint.
    await page.select('#filter-endpoint', '');
    await page.click('#filter-form button[type="submit"]');
    await rowOf(page, defaultWebhooks[0].id);
    expect(await page.$eval(`#log-table tr[data-id="${defaultWebhooks[0].id}"] td[data-label="Endpoint"]`, (e) => e.textContent)).toBe(
      `${defaultUrl} (default)`,
    );

    // A stricter receiver's settings, given over the API, show in the details: the public key in
    // full, the OAuth2 client, the client certificate's subject and expiry (never a secret).
    const pkiDir = mkdtempSync(join(tmpdir(), 'portal-pki-'));
    try {
      const pki = makePki(pkiDir);
      const strict = await t
        .http()
        .patch(`${ENDPOINTS_PATH}/${secondId}`)
        .set(bearer(multi.adminKey))
        .send({
          signing: { asymmetric: true },
          auth: {
            type: 'oauth2ClientCredentials',
            tokenUrl: receiver.urlFor('/token'),
            clientId: 'portal-client',
            clientSecret: 'portal-client-secret',
          },
          tls: { clientCertificate: pki.clientCert, clientKey: pki.clientKey },
        })
        .expect(200);
      await page.click('.tabs button[data-view="log"]');
      await showEndpoints(page, 2);
      await page.click(`button[data-endpoint="${secondId}"]`);
      await page.waitForFunction(
        (key: string) => document.querySelector('#endpoint-detail:not([hidden]) #endpoint-facts')?.textContent?.includes(key),
        {},
        strict.body.publicKey as string,
      );
      const facts = await page.$eval('#endpoint-facts', (e) => e.textContent ?? '');
      expect(facts).toContain(`Signaturesv1 (shared secret) and v1a (Ed25519), public key ${strict.body.publicKey}`);
      expect(facts).toContain(`Receiver authOAuth2 client credentials: client portal-client at ${receiver.urlFor('/token')}`);
      expect(facts).toContain(
        `Client certificateO=Example Wallets, CN=nft-wallet-client, expires ${strict.body.tls.notAfterUtc.slice(0, 10)}`,
      );
      expect(facts).not.toContain('portal-client-secret');
    } finally {
      rmSync(pkiDir, { recursive: true, force: true });
    }
    await page.close();
  });

  it('rotates an endpoint secret and shows the new one once, switches the endpoint off and on, and adds an endpoint', async () => {
    const { org: rotating, secondId, secondUrl } = await organizationWithTwoEndpoints('rotate', { description: 'Rotating' });
    const page = await openPortal();
    await signIn(page, rotating.adminKey);
    await signedIn(page);
    await showEndpoints(page, 2);
    await page.click(`button[data-endpoint="${secondId}"]`);
    await page.waitForSelector(`#endpoint-detail[data-id="${secondId}"]:not([hidden])`);

    // Rotation: the generated secret is shown once, focused, beside the url it belongs to.
    await page.$eval('#rotate-valid', (input) => ((input as HTMLInputElement).value = '3600'));
    await page.click('#rotate-form button[type="submit"]');
    await page.waitForSelector('#secret-box:not([hidden])');
    const secret = await page.$eval('#new-secret', (input) => (input as HTMLTextAreaElement).value);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.$eval('#secret-endpoint', (e) => e.textContent)).toBe(secondUrl);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('new-secret');
    expect(await page.$eval('#secret-box', (e) => e.textContent)).toContain('Shown once.');
    await page.waitForFunction(
      (id) =>
        document
          .querySelector(`#endpoints-table tr[data-id="${id}"] td[data-label="Shared secret"]`)
          ?.textContent?.startsWith('set; the previous one signs too until '),
      {},
      secondId,
    );
    expect(await statusLine(page)).toMatch(/^Secret of Rotating rotated; the previous one stays valid until .+ UTC\.$/);
    const rotated = await endpointOverApi(rotating, secondId);
    expect(rotated.previousSecretExpiresAtUtc).not.toBeNull();
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-secret-1280.png'), fullPage: true });

    // It is the secret that now signs: a test send carries it, and the replaced one beside it.
    await page.click('#test-form button[type="submit"]');
    await page.waitForFunction(() => /^Test webhook \S+ queued for Rotating: /.test(document.getElementById('status')?.textContent ?? ''));
    const testId = (await statusLine(page)).split(' ')[2];
    const signed = (await receiver.waitFor((r) => r.some((w) => w.body.id === testId))).find(
      (w) => w.body.id === testId,
    ) as ReceivedWebhook;
    expect(signatureIsValid(signed, secret)).toBe(true);
    expect(signed.headers['x-service-webhook-hmac-previous']).toBe(createHmac('sha256', SECOND_SECRET).update(signed.raw).digest('base64'));

    // Once: leaving the view forgets it, and coming back does not show it again.
    await page.click('.tabs button[data-view="log"]');
    await showEndpoints(page, 2);
    expect(await page.$eval('#secret-box', (e) => (e as HTMLElement).hidden)).toBe(true);
    expect(await page.$eval('#new-secret', (input) => (input as HTMLTextAreaElement).value)).toBe('');

    // Switched off and on again (PATCH enabled).
    expect(await page.$eval('#endpoint-toggle', (e) => e.textContent)).toBe('Disable endpoint');
    await page.click('#endpoint-toggle');
    await page.waitForFunction(
      (id) => document.querySelector(`#endpoints-table tr[data-id="${id}"] td[data-label="Status"]`)?.textContent === 'disabled',
      {},
      secondId,
    );
    expect(await endpointOverApi(rotating, secondId)).toMatchObject({ enabled: false, disabledReason: null });
    await page.waitForFunction(() => document.getElementById('endpoint-toggle')?.textContent === 'Enable endpoint');
    await page.click('#endpoint-toggle');
    await page.waitForFunction(
      (id) => document.querySelector(`#endpoints-table tr[data-id="${id}"] td[data-label="Status"]`)?.textContent === 'enabled',
      {},
      secondId,
    );
    expect(await endpointOverApi(rotating, secondId)).toMatchObject({ enabled: true });

    // A third endpoint from the small form: its generated secret is shown once too.
    await page.type('#create-url', receiver.urlFor('/rotate/third'));
    await page.type('#create-description', 'Added in the portal');
    for (const type of ['payment', 'transaction', 'kyc', 'document', 'custodialAccount']) await page.click(`#create-type-${type}`);
    await page.type('#create-contracts', CONTRACT.toLowerCase());
    await page.type('#create-rate', '25');
    await page.type('#create-headers', 'X-Gateway-Token: gw 4f1c9a\nX-Tenant:acme');
    await page.click('#create-form button[type="submit"]');
    await showEndpoints(page, 3);
    await page.waitForSelector('#secret-box:not([hidden])');
    const third = (await t.http().get(ENDPOINTS_PATH).set(bearer(rotating.adminKey)).expect(200)).body.endpoints[2];
    expect(third).toMatchObject({
      url: receiver.urlFor('/rotate/third'),
      description: 'Added in the portal',
      webhookTypes: ['nft'],
      filters: { contractAddresses: [CONTRACT] },
      rateLimitPerSecond: 25,
      headers: { 'X-Gateway-Token': 'gw 4f1c9a', 'X-Tenant': 'acme' },
      enabled: true,
      hasSharedSecret: true,
    });
    // Its details say both.
    const facts = await page.$$eval('#endpoint-facts dt, #endpoint-facts dd', (items) => items.map((i) => i.textContent ?? ''));
    expect(facts[facts.indexOf('Rate limit') + 1]).toBe('at most 25 attempts per second');
    expect(facts[facts.indexOf('Custom headers') + 1]).toMatch(
      /^(X-Gateway-Token: gw 4f1c9a; X-Tenant: acme|X-Tenant: acme; X-Gateway-Token: gw 4f1c9a)$/,
    );
    expect(await page.$eval('#new-secret', (input) => (input as HTMLTextAreaElement).value)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.$eval('#endpoint-detail', (e) => (e as HTMLElement).dataset.id)).toBe(third.id);
    await page.click('#secret-done');
    await page.waitForSelector('#secret-box', { hidden: true });
    expect(await page.$eval('#new-secret', (input) => (input as HTMLTextAreaElement).value)).toBe('');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('endpoint-detail');
    await page.close();
  });

  it('adds an endpoint with full bodies, a content filter and a retry schedule from the form, tries the filter, and logs an operational notice', async () => {
    // The second endpoint hears of the organization's other endpoints only (`operational`).
    const {
      org: choosing,
      secondId: watcherId,
      secondUrl: watcherUrl,
    } = await organizationWithTwoEndpoints('choices', { webhookTypes: ['operational'], description: 'Watcher' });
    const filter = { resourceType: 'Wallet', data: { name: { $startsWith: 'Vault' } } };
    const page = await openPortal();
    await signIn(page, choosing.adminKey);
    await signedIn(page);
    await showEndpoints(page, 2);
    expect((await endpointRow(page, watcherId)).Types).toBe('operational');

    // operational is offered with the other types, and not chosen unasked.
    expect(await page.$eval('#create-type-operational', (box) => (box as HTMLInputElement).checked)).toBe(false);
    await page.type('#create-url', receiver.urlFor('/choices/first'));
    await page.type('#create-description', 'First');
    for (const type of ['payment', 'transaction', 'nft', 'kyc', 'document']) await page.click(`#create-type-${type}`);
    await page.select('#create-payload', 'full');
    await page.type('#create-retry', '5, 30, 120');
    // JSON that does not parse is named under the filter, and nothing is sent.
    await setText(page, '#create-filter', '{"resourceType": ');
    await page.click('#create-form button[type="submit"]');
    await page.waitForFunction(() => /^Not sent: filter is not valid JSON/.test(document.getElementById('status')?.textContent ?? ''));
    expect(await fieldProblems(page, 'filter')).toMatch(/^filter: is not valid JSON: /);
    expect((await t.http().get(ENDPOINTS_PATH).set(bearer(choosing.adminKey)).expect(200)).body.endpoints).toHaveLength(2);

    await setText(page, '#create-filter', JSON.stringify(filter, null, 2));
    await page.click('#create-form button[type="submit"]');
    await showEndpoints(page, 3);
    await page.waitForSelector('#secret-box:not([hidden])');
    const first = (await t.http().get(ENDPOINTS_PATH).set(bearer(choosing.adminKey)).expect(200)).body.endpoints[2];
    expect(first).toMatchObject({
      description: 'First',
      webhookTypes: ['custodialAccount'],
      payload: 'full',
      filter,
      retrySchedule: [5, 30, 120],
    });
    expect(await fieldProblems(page, 'filter')).toBe('');
    expect((await endpointRow(page, first.id)).Filters).toBe('a content filter');
    await page.waitForSelector(`#endpoint-detail[data-id="${first.id}"]:not([hidden])`);
    const facts = await endpointFacts(page);
    expect(facts).toMatchObject({
      Body: 'full: the envelope and data, the resource as its GET answers',
      'Retry schedule': '5, 30, 120 seconds',
    });
    expect(JSON.parse(facts['Content filter'])).toEqual(filter);
    await page.click('#secret-done');

    // A wallet the filter lets through arrives with its data; another one does not arrive.
    const vaultId = await createWallet(t, choosing, 'Vault 7');
    const dailyId = await createWallet(t, choosing, 'Daily');
    const received = await receiver.waitFor(
      (r) =>
        [vaultId, dailyId].every((id) => r.some((w) => w.path === '/choices/default' && w.body.resourceId === id)) &&
        r.some((w) => w.path === '/choices/first' && w.body.resourceId === vaultId),
    );
    const toFirst = received.find((w) => w.path === '/choices/first') as ReceivedWebhook;
    expect(toFirst.body.data).toMatchObject({ id: vaultId, name: 'Vault 7' });
    const firstWebhooks = await webhooksOf(choosing, first.id);
    expect(firstWebhooks.map((w) => w.resourceId)).toEqual([vaultId]);
    const [vaultWebhook] = firstWebhooks;

    // The filter test, from the endpoint's own settings: a recent event that matches...
    await page.click('#endpoint-edit');
    expect(await page.$eval('#create-title', (e) => e.textContent)).toBe('Change endpoint First');
    expect(JSON.parse(await page.$eval('#create-filter', (e) => (e as HTMLTextAreaElement).value))).toEqual(filter);
    await page.click('#filter-test summary');
    await page.waitForSelector(`#filter-test-source option[value="${vaultWebhook.id}"]`);
    await page.select('#filter-test-source', vaultWebhook.id);
    await page.waitForFunction(() => (document.getElementById('filter-test-event') as HTMLTextAreaElement).value.includes('Vault 7'));
    expect(JSON.parse(await page.$eval('#filter-test-event', (e) => (e as HTMLTextAreaElement).value))).toMatchObject({
      webhookType: 'custodialAccount',
      resourceType: 'Wallet',
      action: 'create',
      organizationId: choosing.id,
      resourceId: vaultId,
      data: { name: 'Vault 7' },
    });
    const testResult = () => page.$eval('#filter-test-result', (e) => e.textContent ?? '');
    await page.click('#filter-test-run');
    await page.waitForFunction(() => document.getElementById('filter-test-result')?.dataset.matches === 'true');
    expect(await testResult()).toBe('matches');

    // ...a pasted one that does not...
    const daily = { webhookType: 'custodialAccount', resourceType: 'Wallet', action: 'create', data: { name: 'Daily' } };
    await setText(page, '#filter-test-event', JSON.stringify(daily));
    await page.click('#filter-test-run');
    await page.waitForFunction(() => document.getElementById('filter-test-result')?.dataset.matches === 'false');
    expect(await testResult()).toBe('does not match');

    // ...and a filter the service refuses, the offending path shown under the filter.
    await setText(page, '#create-filter', '{"data": {"name": {"$foo": "Vault"}}}');
    await page.click('#filter-test-run');
    await page.waitForFunction(() => (document.getElementById('filter-test-result')?.textContent ?? '').startsWith('Not tested: '));
    expect(await fieldProblems(page, 'filter')).toMatch(/^filter\.data\.name\.\$foo: /);
    expect(await testResult()).toContain('(VALIDATION_FAILED)');

    // Saving sends what changed: thin bodies and another schedule; the filter stays as it was.
    await setText(page, '#create-filter', JSON.stringify(filter));
    await page.select('#create-payload', 'thin');
    await setText(page, '#create-retry', '10, 60');
    await page.click('#create-form button[type="submit"]');
    await page.waitForFunction(
      () => (document.getElementById('status')?.textContent ?? '') === 'Endpoint First saved: payload, retrySchedule.',
    );
    expect(await endpointOverApi(choosing, first.id)).toMatchObject({ payload: 'thin', filter, retrySchedule: [10, 60] });
    await page.waitForFunction(() => document.getElementById('endpoint-facts')?.textContent?.includes('10, 60 seconds'));
    expect(await endpointFacts(page)).toMatchObject({ Body: 'thin: the envelope only', 'Retry schedule': '10, 60 seconds' });
    expect(await page.$eval('#create-title', (e) => e.textContent)).toBe('Add an endpoint');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-choices-1280.png'), fullPage: true });

    // The default endpoint takes no content filter: its form hides the filter and its test.
    await page.click(`button[data-endpoint="${choosing.id}"]`);
    await page.waitForSelector(`#endpoint-detail[data-id="${choosing.id}"]:not([hidden])`);
    await page.click('#endpoint-edit');
    expect(await page.$$eval('#create-form [data-not-default]', (blocks) => blocks.map((b) => (b as HTMLElement).hidden))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    await page.click('#create-cancel');
    expect(await page.$eval('#create-form [data-field="filter"]', (b) => (b as HTMLElement).hidden)).toBe(false);

    // First switched off from the form: the watcher hears of it, never First itself.
    await page.click(`button[data-endpoint="${first.id}"]`);
    await page.waitForFunction(() => document.getElementById('endpoint-toggle')?.textContent === 'Disable endpoint');
    await page.click('#endpoint-toggle');
    await page.waitForFunction(
      (id) => document.querySelector(`#endpoints-table tr[data-id="${id}"] td[data-label="Status"]`)?.textContent === 'disabled',
      {},
      first.id,
    );
    // Only the notice about First: the default endpoint's `enabled` (switched on by the set-up's
    // webhook-config PATCH) reaches the watcher too when it was judged after the watcher was added.
    const notices = await waitUntil(
      async () => (await webhooksOf(choosing, watcherId, 'succeeded')).filter((w: { resourceId: string }) => w.resourceId === first.id),
      (webhooks) => webhooks.length > 0,
    );
    const [notice] = await receiver
      .waitFor((r) => r.some((w) => w.body.id === notices[0].id))
      .then((r) => r.filter((w) => w.body.id === notices[0].id));
    expect(watcherUrl.endsWith(notice.path)).toBe(true);
    expect(notice.body).toMatchObject({ resourceType: 'WebhookEndpoint', action: 'disabled', resourceId: first.id });

    // In the log, filtered by its type: it says what happened and to which endpoint.
    await page.click('.tabs button[data-view="log"]');
    await page.select('#filter-type', 'operational');
    await page.click('#filter-form button[type="submit"]');
    await page.waitForSelector(`#log-table:not([aria-busy]) tbody tr[data-id="${notices[0].id}"]`);
    const rows = await page.$$eval('#log-table tbody tr', (trs) =>
      trs.map((tr) => ({
        id: tr.dataset.id,
        ...Object.fromEntries(Array.from(tr.querySelectorAll('td')).map((td) => [td.dataset.label, td.textContent ?? ''])),
      })),
    );
    // Operational entries only (the default endpoint's `enabled` may be listed beside it, above).
    expect(rows.every((row) => row.Type === 'operational')).toBe(true);
    expect(rows.find((row) => row.id === notices[0].id)).toMatchObject({
      Endpoint: 'Watcher',
      Type: 'operational',
      Resource: 'disabled: endpoint First',
    });
    await page.click(`button[data-id="${notices[0].id}"]`);
    await page.waitForSelector('#detail:not([hidden]) #attempts li');
    expect(await page.$eval('#detail-facts', (e) => e.textContent)).toContain('Aboutendpoint First');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-operational-1280.png'), fullPage: true });
    await page.close();
  });

  it('adds a broker endpoint from the form and shows its destination with the password masked, in the list, the details and the form', async () => {
    const { org: brokered } = await organizationWithTwoEndpoints('broker');
    const topic = `nftw/portal/${Date.now()}/{webhookType}`;
    const destination = { type: 'mqtt', url: 'mqtt://svc:Portal-Secret-9@127.0.0.1:1883', topic, qos: 1 };
    const masked = { ...destination, url: 'mqtt://svc:***@127.0.0.1:1883' };
    const page = await openPortal();
    await signIn(page, brokered.adminKey);
    await signedIn(page);
    await showEndpoints(page, 2);
    // No url and a destination: the service publishes to the broker.
    await setText(page, '#create-destination', JSON.stringify(destination));
    await page.type('#create-description', 'Broker');
    await page.click('#create-form button[type="submit"]');
    await showEndpoints(page, 3);
    const added = (await t.http().get(ENDPOINTS_PATH).set(bearer(brokered.adminKey)).expect(200)).body.endpoints[2];
    expect(added).toMatchObject({ url: null, description: 'Broker', destination: masked });
    await page.waitForSelector('#secret-box:not([hidden])');
    await page.click('#secret-done');
    expect((await endpointRow(page, added.id)).Endpoint).toContain('mqtt: mqtt://svc:***@127.0.0.1:1883');
    await page.waitForSelector(`#endpoint-detail[data-id="${added.id}"]:not([hidden])`);
    const facts = await endpointFacts(page);
    expect(facts).toMatchObject({ URL: 'none: publishes to a broker' });
    expect(facts.Destination).toContain('mqtt at mqtt://svc:***@127.0.0.1:1883');
    expect(facts.Destination).toContain(topic);
    // The form shows what GET shows, and saving it unchanged changes nothing (the password stays).
    await page.click('#endpoint-edit');
    expect(JSON.parse(await page.$eval('#create-destination', (e) => (e as HTMLTextAreaElement).value))).toEqual(masked);
    await page.click('#create-form button[type="submit"]');
    await page.waitForFunction(() => /^Nothing to change/.test(document.getElementById('status')?.textContent ?? ''));
    expect(await page.content()).not.toContain('Portal-Secret-9');
    await page.close();
  });

  it("replays a failing endpoint's webhooks from the replay form once the receiver recovers, after the service switched it off", async () => {
    const { org: flaky, defaultUrl, secondId, secondUrl } = await organizationWithTwoEndpoints('replay', { description: 'Flaky' });
    failingPaths.add('/replay/second');
    const walletIds: string[] = [];
    for (let i = 0; i < 12; i += 1) walletIds.push(await createWallet(t, flaky, `replayed ${i}`));
    // Every event reached the healthy default endpoint: none is left to be judged for the other.
    await receiver.waitFor((r) => walletIds.every((id) => r.some((w) => defaultUrl.endsWith(w.path) && w.body.resourceId === id)));
    // Every attempt to the second endpoint failed: the service switches it off once its window passed.
    await waitUntil(
      () => endpointOverApi(flaky, secondId),
      (endpoint) => endpoint.enabled === false,
      20_000,
    );
    const failed = await waitUntil(
      () => webhooksOf(flaky, secondId),
      (webhooks) => webhooks.every((w) => w.status === 'failed'),
    );
    // Ten failed webhooks switch it off: the last events may have found it off already.
    expect(failed.length).toBeGreaterThanOrEqual(10);

    const page = await openPortal();
    await signIn(page, flaky.adminKey);
    await signedIn(page);
    await showEndpoints(page, 2);
    expect((await endpointRow(page, secondId)).Status).toBe('switched off: failing');
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-switched-off-1280.png'), fullPage: true });

    // The receiver recovers; the admin switches the endpoint on again and replays what failed.
    failingPaths.delete('/replay/second');
    await page.click(`button[data-endpoint="${secondId}"]`);
    await page.waitForFunction(() => document.getElementById('endpoint-toggle')?.textContent === 'Enable endpoint');
    await page.click('#endpoint-toggle');
    await page.waitForFunction(
      (id) => document.querySelector(`#endpoints-table tr[data-id="${id}"] td[data-label="Status"]`)?.textContent === 'enabled',
      {},
      secondId,
    );
    expect(await endpointOverApi(flaky, secondId)).toMatchObject({ enabled: true, disabledReason: null });

    await page.click('.tabs button[data-view="log"]');
    await page.waitForSelector('#replay-form');
    await setLocalTime(page, '#replay-since', new Date(Date.now() - 3600_000));
    expect(await page.$eval('#replay-status', (e) => (e as HTMLSelectElement).value)).toBe('failed');
    await page.select('#replay-endpoint', secondId);
    await tabTo(page, '#replay-form button[type="submit"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (document.getElementById('replay-result')?.textContent ?? '') !== '');
    expect(await page.$eval('#replay-result', (e) => e.textContent)).toBe(`${failed.length} webhooks will be sent again.`);

    // Each is sent again with its own id; the log, filtered to that endpoint, shows them succeeded.
    await waitUntil(
      () => webhooksOf(flaky, secondId, 'succeeded'),
      (webhooks) => webhooks.length === failed.length,
      20_000,
    );
    for (const webhook of failed) expect(receiver.byId(webhook.id).some((w) => secondUrl.endsWith(w.path))).toBe(true);
    await page.select('#filter-endpoint', secondId);
    await page.select('#filter-status', 'succeeded');
    await page.click('#filter-form button[type="submit"]');
    await page.waitForFunction(
      (n) =>
        !document.getElementById('log-table')?.hasAttribute('aria-busy') && document.querySelectorAll('#log-table tbody tr').length === n,
      {},
      failed.length,
    );
    const shown = await page.$$eval('#log-table tbody tr', (rows) =>
      rows.map((r) => [
        (r as HTMLElement).dataset.id,
        r.querySelector('.pill')?.textContent,
        r.querySelector('td[data-label="Endpoint"]')?.textContent,
      ]),
    );
    expect(shown.map(([id]) => id).sort()).toEqual(failed.map((w) => w.id).sort());
    for (const [, status, endpoint] of shown) expect([status, endpoint]).toEqual(['succeeded', 'Flaky']);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-replayed-1280.png'), fullPage: true });
    await page.close();
  });

  it("shows a replay the service refuses as a visible error: the organization's replay budget", async () => {
    const { org: busy, secondId } = await organizationWithTwoEndpoints('limit');
    // Eight wallets, each a webhook to both endpoints: 16 delivered webhooks, more than the budget of 15.
    for (let i = 0; i < 8; i += 1) await createWallet(t, busy, `budget ${i}`);
    await waitUntil(
      async () => [...(await webhooksOf(busy, busy.id, 'succeeded')), ...(await webhooksOf(busy, secondId, 'succeeded'))],
      (webhooks) => webhooks.length === 16,
    );
    const page = await openPortal();
    await signIn(page, busy.adminKey);
    await signedIn(page);
    await setLocalTime(page, '#replay-since', new Date(Date.now() - 3600_000));
    await page.select('#replay-status', 'all');
    await page.click('#replay-form button[type="submit"]');
    await page.waitForFunction(() => (document.getElementById('replay-result')?.textContent ?? '') !== '');
    expect(await page.$eval('#replay-result', (e) => e.textContent)).toMatch(
      /^Replay refused: Replays may queue at most 15 webhooks per hour .+ \(RATE_LIMITED\)$/,
    );
    expect(await page.$eval('#replay-result', (e) => e.className)).toBe('result bad');
    await page.close();
  });

  it('charts the statistics of the last 24 hours with the counts of the webhooks created, per endpoint too', async () => {
    const { org: counted, defaultUrl, secondId } = await organizationWithTwoEndpoints('stats', { description: 'Always failing' });
    failingPaths.add('/stats/second');
    try {
      const walletIds: string[] = [];
      for (let i = 0; i < 3; i += 1) walletIds.push(await createWallet(t, counted, `counted ${i}`));
      await receiver.waitFor((r) => walletIds.every((id) => r.some((w) => defaultUrl.endsWith(w.path) && w.body.resourceId === id)));
      // Three succeeded at once on the default endpoint; three failed after every retry on the second.
      await waitUntil(
        () => webhooksOf(counted, secondId, 'failed'),
        (webhooks) => webhooks.length === 3,
      );
      expect(await webhooksOf(counted, counted.id, 'succeeded')).toHaveLength(3);
    } finally {
      failingPaths.delete('/stats/second');
    }

    const page = await openPortal();
    await signIn(page, counted.adminKey);
    await signedIn(page);
    await page.click('.tabs button[data-view="stats"]');
    await page.waitForSelector('#stats-table[data-loaded="true"]');
    await page.waitForSelector('#stats-view:not([aria-busy]) #chart canvas');
    const table = () =>
      page.$$eval('#stats-table tbody tr', (rows) => rows.map((r) => Array.from(r.querySelectorAll('td')).map((td) => td.textContent)));
    const rows = await table();
    // Every count the page shows: the hours with webhooks (one, or two across an hour boundary), then the total.
    expect(rows[rows.length - 1]).toEqual(['All 24 hours', '3', '3', '3', '', '']);
    const hours = rows.slice(0, -1);
    expect(hours.length).toBeGreaterThanOrEqual(1);
    const sum = (column: number) => hours.reduce((total, row) => total + Number(row[column]), 0);
    expect([sum(1), sum(2), sum(3)]).toEqual([3, 3, 3]);
    // The same buckets as the API answers, latencies included.
    const stats = await t.http().get(`${WEBHOOKS_PATH}/stats?bucket=1h`).set(bearer(counted.adminKey)).expect(200);
    const active = (stats.body.buckets as StatsBucket[]).filter((b) => b.succeeded + b.failed + b.retried > 0);
    const latency = (ms: number | null) => (ms === null ? '—' : `${ms} ms`);
    expect(hours).toEqual(
      active.map((b) => [
        b.startUtc.slice(0, 16).replace('T', ' '),
        String(b.succeeded),
        String(b.failed),
        String(b.retried),
        latency(b.p50Ms),
        latency(b.p99Ms),
      ]),
    );
    expect(await page.$eval('#stats-summary', (e) => e.textContent)).toBe('3 succeeded, 3 failed and 3 retried in the last 24 hours.');
    expect(await page.$eval('#chart', (e) => e.getAttribute('aria-label'))).toContain('3 succeeded, 3 failed and 3 retried');
    // Without hovering, the legend reads the latest hour with webhooks, not `--`.
    const legend = await page.$$eval('#chart .u-legend .u-series', (series) =>
      series.map((row) => [row.querySelector('.u-label')?.textContent, row.querySelector('.u-value')?.textContent]),
    );
    const latest = active[active.length - 1];
    expect(legend.slice(1, 3)).toEqual([
      ['succeeded', String(latest.succeeded)],
      ['failed', String(latest.failed)],
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-stats-1280.png'), fullPage: true });

    // One endpoint's share: the failing one.
    await page.select('#stats-endpoint', secondId);
    await page.click('#stats-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('stats-summary')?.textContent?.startsWith('0 succeeded, 3 failed'));
    expect((await table()).pop()).toEqual(['All 24 hours', '0', '3', '3', '', '']);
    await page.close();
  });

  it('shows an auditor everything but no control that changes anything', async () => {
    const { org: audited, secondId } = await organizationWithTwoEndpoints('audit', { description: 'Audited' });
    const auditor = (await createApiKey(t, audited.id, ['auditor'])).key;
    const someId = await deliveredWebhook('seen by the auditor', audited);
    const page = await openPortal();
    await signIn(page, auditor);
    await signedIn(page);
    expect(await page.$eval('#who-role', (e) => e.textContent)).toBe('auditor');
    await rowOf(page, someId);
    await page.click(`button[data-id="${someId}"]`);
    await page.waitForSelector('#detail:not([hidden]) #attempts li');
    const onLog = await visibleButtons(page);
    expect(onLog).toEqual(expect.arrayContaining(['Sign out', 'Attempts']));

    await showEndpoints(page, 2);
    await page.click(`button[data-endpoint="${secondId}"]`);
    await page.waitForSelector(`#endpoint-detail[data-id="${secondId}"]:not([hidden]) #endpoint-facts dd`);
    const onEndpoints = await visibleButtons(page);
    expect(onEndpoints).toEqual(expect.arrayContaining(['Details']));

    await page.click('.tabs button[data-view="stats"]');
    await page.waitForSelector('#stats-view:not([hidden]):not([aria-busy])');
    const onStats = await visibleButtons(page);
    for (const control of WRITE_CONTROLS) {
      expect(onLog).not.toContain(control);
      expect(onEndpoints).not.toContain(control);
      expect(onStats).not.toContain(control);
    }
    // Not merely hidden by style: no write form is reachable by keyboard either, in any view.
    for (const view of ['log', 'endpoints', 'stats']) {
      await page.click(`.tabs button[data-view="${view}"]`);
      await page.waitForSelector(`#${view}-view:not([hidden])`);
      const reachable = await page.$$eval(WRITE_SELECTORS, (elements) =>
        elements.filter((e) => (e as HTMLElement).offsetParent !== null).map((e) => e.id),
      );
      expect(reachable).toEqual([]);
    }
    await showEndpoints(page, 2);
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
    const { org: phone, secondId } = await organizationWithTwoEndpoints('phone', {
      webhookTypes: ['transaction', 'nft', 'custodialAccount'],
      description: 'A long description of the second endpoint, to see that it wraps on a narrow screen',
      contractAddresses: [CONTRACT, '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'],
    });
    const someId = await deliveredWebhook('seen on a phone', phone);
    const page = await openPortal(390, 844);
    /** Elements past the right edge or scrolling sideways inside (tables become cards here). */
    const overflow = () =>
      page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const outside = Array.from(document.querySelectorAll('body *'))
          // A one-line text field scrolls a long value inside itself, as every such field does.
          .filter((e) => e.getBoundingClientRect().right > width + 0.5 || (e.scrollWidth > e.clientWidth + 1 && e.tagName !== 'INPUT'))
          // Only the body as sent may scroll inside its own box (a long line of JSON).
          .filter((e) => e.id !== 'payload' && (e as HTMLElement).offsetParent !== null)
          // Text for screen readers only sits in a clipped 1 px box.
          .filter((e) => !e.closest('.sr-only, table.cards thead'))
          .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`);
        return { scrolls: document.documentElement.scrollWidth > width, outside };
      });
    const fits = { scrolls: false, outside: [] };
    expect(await overflow()).toEqual(fits);
    await signIn(page, phone.adminKey);
    await signedIn(page);
    // The log with a webhook's attempts open, and the replay form below it.
    await rowOf(page, someId);
    await page.click(`button[data-id="${someId}"]`);
    await page.waitForSelector('#detail:not([hidden]) #attempts li');
    expect(await page.$eval('#replay-form', (e) => (e as HTMLElement).offsetParent !== null)).toBe(true);
    expect(await overflow()).toEqual(fits);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-log-390.png'), fullPage: true });

    // The endpoints as cards, one opened with its forms, and a secret shown once.
    await showEndpoints(page, 2);
    await page.click(`button[data-endpoint="${secondId}"]`);
    await page.waitForSelector(`#endpoint-detail[data-id="${secondId}"]:not([hidden])`);
    await page.click('#rotate-form button[type="submit"]');
    await page.waitForSelector('#secret-box:not([hidden])');
    await page.waitForSelector('#endpoints-table:not([aria-busy])');
    expect(await overflow()).toEqual(fits);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-endpoints-390.png'), fullPage: true });
    // The endpoint's settings in the form, with the filter test open on a recent event.
    await page.click('#endpoint-edit');
    await page.click('#filter-test summary');
    await page.waitForSelector(`#filter-test-source option[value="${someId}"]`);
    await page.select('#filter-test-source', someId);
    await page.waitForFunction(() => (document.getElementById('filter-test-event') as HTMLTextAreaElement).value !== '');
    expect(await overflow()).toEqual(fits);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-endpoint-form-390.png'), fullPage: true });

    await page.click('.tabs button[data-view="stats"]');
    await page.waitForSelector('#stats-table[data-loaded="true"]');
    await page.waitForSelector('#stats-view:not([aria-busy]) #chart canvas');
    expect(await overflow()).toEqual(fits);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-stats-390.png'), fullPage: true });
    await page.close();
  });

  it("finds a wallet by address and shows its NFTs as the service's own thumbnails, each token's details, and its activity", async () => {
    const api = nftApi(t, org.adminKey);
    const address = `0x${randomBytes(20).toString('hex')}`;
    const wallet = await api.wallet({ name: 'Collector', address });
    // Another wallet at the same address: the page offers both.
    const twin = await api.wallet({ name: 'Twin', address });
    const png = await sharp({ create: { width: 120, height: 60, channels: 3, background: '#cc3300' } })
      .png()
      .toBuffer();
    const pictured = await api.token({
      metadata: { name: 'Sunset', description: 'Red sky', image: `data:image/png;base64,${png.toString('base64')}` },
    });
    const bare = await api.token({ metadata: { name: 'No picture' } });
    const broken = await api.token({ metadata: { name: 'On Arweave', image: 'ar://bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U' } });
    for (const token of [pictured, bare, broken]) await api.mint(token.id, wallet.id);
    await waitUntil(
      () => api.balancesPage(wallet.id),
      (res) => res.body.nftTokenBalances.every((b: { token: { media: { status: string } } }) => b.token.media.status !== 'pending'),
      30_000,
    );

    const page = await openPortal();
    await signIn(page, org.adminKey);
    await signedIn(page);
    await page.click('.tabs button[data-view="wallet"]');
    await page.type('#wallet-query', checksumOf(address));
    await page.keyboard.press('Enter');
    await page.waitForSelector(`#wallet-choices button[data-wallet="${twin.id}"]`);
    await page.click(`#wallet-choices button[data-wallet="${wallet.id}"]`);
    await page.waitForSelector('#nft-grid[data-loaded="true"]:not([aria-busy])');
    const cards = await page.$$eval('#nft-grid li', (items) =>
      items.map((li) => ({
        token: (li as HTMLElement).dataset.token,
        media: (li as HTMLElement).dataset.media,
        text: (li as HTMLElement).innerText.replace(/\s+/g, ' ').trim(),
      })),
    );
    expect(cards).toEqual(
      [
        { token: pictured.id, media: 'ok', text: 'Sunset' },
        { token: bare.id, media: 'none', text: 'no image No picture' },
        { token: broken.id, media: 'failed', text: 'image failed: FETCH_FAILED On Arweave' },
      ].sort((a, b) => a.token.localeCompare(b.token)),
    );
    // The thumbnail is the service's own WebP, loaded by the browser without a key.
    await page.waitForFunction(
      (id) => {
        const img = document.querySelector<HTMLImageElement>(`#nft-grid li[data-token="${id}"] img`);
        return img !== null && img.complete && img.naturalWidth === 120;
      },
      {},
      pictured.id,
    );
    const src = await page.$eval(`#nft-grid li[data-token="${pictured.id}"] img`, (img) => img.src);
    expect(src).toMatch(new RegExp(`^${base}/v1/media/[0-9a-f]{64}/256\\.webp\\?exp=\\d+&sig=`));

    await page.click(`#nft-grid li[data-token="${pictured.id}"] button`);
    await page.waitForSelector(`#nft-detail[data-id="${pictured.id}"]:not([hidden])`);
    const facts = await page.$eval('#nft-facts', (dl) => dl.textContent ?? '');
    expect(facts).toContain('Red sky');
    expect(facts).toContain('120 × 60, image/png');
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#nft-picture img');
      return img !== null && img.complete && img.naturalWidth === 120 && img.src.includes('/1024.webp');
    });

    await page.waitForSelector('#activity-table[data-loaded="true"]:not([aria-busy])');
    // The activity list is the wallet's feed, newest first, as GET /v1/wallets/{id}/transfers answers it.
    const feed = await t.http().get(`/v1/wallets/${wallet.id}/transfers`).set(bearer(org.adminKey)).expect(200);
    const rows = await page.$$eval('#activity-table tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.id));
    expect(rows).toEqual(feed.body.transfers.map((x: { id: string }) => x.id));
    expect(rows).toHaveLength(3);
    expect(await page.$eval('#activity-note', (e) => (e as HTMLElement).hidden)).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, 'portal-wallet.png'), fullPage: true });

    // A wrong entry says what is expected; an address without a wallet says so.
    await page.$eval('#wallet-query', (input) => ((input as HTMLInputElement).value = ''));
    await page.type('#wallet-query', 'not a wallet');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (document.getElementById('wallet-error')?.textContent ?? '').includes('Enter a wallet id'));
    expect(await page.$eval('#wallet-panel', (e) => (e as HTMLElement).hidden)).toBe(true);
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
