// @ts-check
/**
 * The webhook portal (README.md "Portal"). Everything it shows comes from the public API with
 * the signed-in user's key, sent as a Bearer header; the key lives in sessionStorage only (no
 * cookie, no server session). Loaded as an external file so the strict CSP (script-src 'self')
 * stays on; it never writes HTML from data (textContent only), so API data cannot inject markup.
 */
(() => {
  'use strict';

  const KEY_STORAGE = 'portal.apiKey';
  const ORG = '/api/organization/v1/current-organization';
  const ENDPOINTS = `${ORG}/webhook-endpoints`;
  const WEBHOOK_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];
  /** How long the detail view watches for the attempt a redelivery makes. */
  const REDELIVER_WATCH_MS = 30000;
  const DAY_MS = 24 * 3600 * 1000;

  // The answers this page reads (the OpenAPI document, /docs-json), with the fields it uses.
  /** @typedef {{detail?: string, title?: string, code?: unknown, errors?: unknown}} Problem */
  /** @typedef {{id: string, isDefault: boolean, url: string|null, description: string|null, enabled: boolean, webhookTypes: string[], filters: {contractAddresses: string[]|null}, ordering: string, hasSharedSecret: boolean, previousSecretExpiresAtUtc: string|null, headers?: Record<string, string>, rateLimitPerSecond?: number|null, publicKey?: string|null, previousPublicKey?: string|null, auth?: {type: string, tokenUrl: string, clientId: string, scope: string|null, hasClientSecret: boolean}|null, tls?: {hasClientKey: boolean, subject: string, notAfterUtc: string}|null, disabledReason: string|null, createdAtUtc: string, updatedAtUtc: string}} WebhookEndpoint */
  /** @typedef {{endpoints: WebhookEndpoint[], nextPageKey: string|null}} EndpointPage */
  /** @typedef {{apiKeys?: {keyPrefix?: unknown, roles?: unknown}[], nextPageKey: string|null}} ApiKeyPage */
  /** @typedef {{id: string, endpointId: string, eventId: string, webhookType: string, resourceType: string, resourceId: string, action: string, status: string, attemptCount: number, createdAtUtc: string, lastAttemptAtUtc: string|null, nextAttemptAtUtc: string|null, lastResponseStatus: number|null}} WebhookSummary */
  /** @typedef {{webhooks: WebhookSummary[], nextPageKey: string|null}} WebhookPage */
  /** @typedef {{attempt: number, startedAtUtc: string, durationMs: number, responseStatus: number|null, error: string|null, responseBody?: string|null}} Attempt */
  /** @typedef {WebhookSummary & {payload: unknown, attempts: Attempt[]}} WebhookDetail */
  /** @typedef {{startUtc: string, succeeded: number, failed: number, retried: number, p50Ms: number|null, p99Ms: number|null}} StatsBucket */
  /** @typedef {{status: string, error: string|null, width: number|null, height: number|null, contentType: string|null, sha256: string|null, thumbnails: {small: string, medium: string, large: string}|null}} Media */
  /** @typedef {{isSpam: boolean, reasons: string[], source: string}} Spam */
  /** @typedef {{id: string, contractAddress: string, blockchainTokenId: string, chainId: number|null, metadataStatus: string, metadataError: string|null, metadata: {name: string|null, description: string|null, image: string|null}, media: Media, spam?: Spam|null}} Token */
  /** @typedef {{tokenId: string, amount: string, token: Token}} Holding */
  /** @typedef {{nftTokenBalances: Holding[], nextPageKey: string|null}} HoldingPage */
  /** @typedef {{id: string, name: string|null, address: string|null, createdAtUtc: string}} Wallet */
  /** @typedef {{wallets: Wallet[], nextPageKey: string|null}} WalletPage */
  /** @typedef {{id: string, type: string, tokenId: string, fromWalletId: string|null, toWalletId: string|null, amount: string, status?: string, source?: string, createdAtUtc: string}} Transfer */
  /** @typedef {{transfers: Transfer[], nextPageKey: string|null}} TransferPage */
  /** The part of a uPlot chart this page uses (the library is loaded as a global by its own script tag). */
  /** @typedef {{destroy(): void, setSize(size: {width: number, height: number}): void}} Chart */
  /** @typedef {{new (options: object, data: (number|null)[][], target: HTMLElement): Chart, paths: {bars(options: {align: -1|1, size: number[]}): unknown}, tzDate(date: Date, zone: string): Date}} ChartLibrary */

  class ApiError extends Error {
    /** @param {number} status @param {unknown} body */
    constructor(status, body) {
      const problem = /** @type {Problem} */ (body && typeof body === 'object' ? body : {});
      super(problem.detail || problem.title || `HTTP ${status}`);
      this.status = status;
      this.code = typeof problem.code === 'string' ? problem.code : '';
    }
  }

  /** @template {HTMLElement} T @param {string} id @returns {T} */
  function $(id) {
    const element = document.getElementById(id);
    if (!element) throw new Error(`missing element #${id}`);
    return /** @type {T} */ (element);
  }

  /**
   * @param {string} tag
   * @param {{text?: string, className?: string, attrs?: Record<string, string>}} [options]
   * @param {(Node|string)[]} [children]
   */
  function el(tag, options = {}, children = []) {
    const element = document.createElement(tag);
    if (options.text !== undefined) element.textContent = options.text;
    if (options.className) element.className = options.className;
    for (const [name, value] of Object.entries(options.attrs || {})) element.setAttribute(name, value);
    for (const child of children) element.append(child);
    return element;
  }

  /**
   * A table cell that carries its column name, shown beside the value when a narrow screen lays
   * rows out as cards.
   * @param {string} label @param {string|Node|(string|Node)[]} content @param {string} [className]
   */
  function cell(label, content, className) {
    return el('td', { className, attrs: { 'data-label': label } }, Array.isArray(content) ? content : [content]);
  }

  /** @param {HTMLElement} list @param {[string, string|Node][]} facts */
  function renderFacts(list, facts) {
    list.replaceChildren(...facts.flatMap(([term, value]) => [el('dt', { text: term }), el('dd', {}, [value])]));
  }

  /**
   * Loads of one region: the region is `aria-busy` while its latest load runs, and an answer that
   * a newer load overtook is dropped, so a slow old answer never overwrites a newer one.
   * @param {string} id
   */
  function loads(id) {
    let latest = 0;
    return {
      start() {
        latest += 1;
        $(id).setAttribute('aria-busy', 'true');
        return latest;
      },
      /** @param {number} load */
      isLatest(load) {
        return load === latest;
      },
      /** @param {number} load */
      end(load) {
        if (load === latest) $(id).removeAttribute('aria-busy');
      },
    };
  }
  const endpointLoads = loads('endpoints-table');
  const logLoads = loads('log-table');
  const statsLoads = loads('stats-view');
  const nftLoads = loads('nft-grid');
  const activityLoads = loads('activity-table');
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
  /** NFTs per page of the grid, and activity entries per page. */
  const NFT_PAGE = 48;
  const ACTIVITY_PAGE = 20;

  /** "1 webhook", "3 webhooks". @param {number} count @param {string} noun */
  function plural(count, noun) {
    return `${count} ${noun}${count === 1 ? '' : 's'}`;
  }

  const state = {
    /** @type {string|null} */ key: null,
    /** @type {'admin'|'auditor'} */ role: 'auditor',
    /** The default endpoint first, then the others in creation order. */
    /** @type {WebhookEndpoint[]} */ endpoints: [],
    /** @type {string|null} the endpoint whose details are open */ endpointId: null,
    /** Page keys of the pages before the current one; the last entry is the current page's key. */
    /** @type {(string|null)[]} */ pageKeys: [null],
    /** @type {string|null} */ nextPageKey: null,
    /** @type {string|null} */ selectedId: null,
    /** @type {Chart|null} */ chart: null,
    watchTimer: 0,
    /** @type {Wallet|null} the wallet the Wallets view shows */ wallet: null,
    /** @type {Holding[]} */ holdings: [],
    /** @type {string|null} */ nftNextPageKey: null,
    /** @type {string|null} */ activityNextPageKey: null,
  };

  // ---- API -----------------------------------------------------------------------------------

  /**
   * @param {string} method @param {string} path
   * The parsed JSON answer (null for an empty one); callers state the shape they read.
   * @param {{body?: unknown, key?: string|null}} [options]
   * @returns {Promise<unknown>}
   */
  async function api(method, path, options = {}) {
    const key = options.key === undefined ? state.key : options.key;
    /** @type {Record<string, string>} */
    const headers = { accept: 'application/json' };
    if (key) headers.authorization = `Bearer ${key}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'omit',
      cache: 'no-store',
    });
    const text = await response.text();
    /** @type {unknown} */
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (!response.ok) {
      if (response.status === 401 && key === state.key && state.key) {
        // The key was revoked while signed in: back to the sign-in form with the reason.
        signOut(`Signed out: ${new ApiError(response.status, body).message}`);
      }
      throw new ApiError(response.status, body);
    }
    return body;
  }

  /** @param {Record<string, string|undefined|null>} params */
  function query(params) {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
    const text = search.toString();
    return text ? `?${text}` : '';
  }

  /** The contract's timestamp form (numeric offset, never `Z`). @param {Date} date */
  function utc(date) {
    return date.toISOString().replace('Z', '+00:00');
  }

  /** A text field of a form ('' when absent; the forms here have no file inputs). @param {FormData} data @param {string} name */
  function formText(data, name) {
    const value = data.get(name);
    return typeof value === 'string' ? value : '';
  }

  /** A datetime-local value (the user's local time) as a Date, or null. @param {string} value */
  function fromLocalInput(value) {
    if (!value) return null;
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? null : date;
  }

  /** A Date as a datetime-local value in the user's time, to the minute. @param {Date} date */
  function toLocalInput(date) {
    const local = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
    return local.toISOString().slice(0, 16);
  }

  /** @param {string|null|undefined} value */
  function shortTime(value) {
    if (!value) return '—';
    return value
      .replace('T', ' ')
      .replace(/(\.\d{3})\d*/, '$1')
      .replace('+00:00', '');
  }

  // ---- status line ---------------------------------------------------------------------------

  /** @param {string} message @param {boolean} [bad] */
  function say(message, bad = false) {
    const status = $('status');
    status.textContent = message;
    status.classList.toggle('bad', bad);
  }

  /** @param {unknown} error */
  function describe(error) {
    if (error instanceof ApiError) return `${error.message}${error.code ? ` (${error.code})` : ''}`;
    return error instanceof Error ? error.message : String(error);
  }

  // ---- sign-in -------------------------------------------------------------------------------

  /** @param {string} key */
  async function signIn(key) {
    // The endpoint list is readable by admins and auditors alone: it proves the key fits.
    const endpoints = await fetchEndpoints(key);
    state.key = key;
    state.endpoints = endpoints;
    state.role = await roleOf(key);
    sessionStorage.setItem(KEY_STORAGE, key);
    showApp();
  }

  /**
   * Admin or auditor, read from the organization's key list (the key's visible prefix names it).
   * A key that cannot be found there is treated as an auditor's: no write control is shown.
   * @param {string} key @returns {Promise<'admin'|'auditor'>}
   */
  async function roleOf(key) {
    /** @type {string|null} */
    let pageKey = null;
    for (let page = 0; page < 20; page += 1) {
      const answer = /** @type {ApiKeyPage} */ (await api('GET', `${ORG}/api-keys${query({ pageSize: '1000', pageKey })}`, { key }));
      const mine = (answer.apiKeys || []).find((k) => typeof k.keyPrefix === 'string' && key.startsWith(k.keyPrefix));
      if (mine) return Array.isArray(mine.roles) && mine.roles.includes('admin') ? 'admin' : 'auditor';
      pageKey = answer.nextPageKey;
      if (!pageKey) break;
    }
    return 'auditor';
  }

  /** @param {string} [message] */
  function signOut(message) {
    sessionStorage.removeItem(KEY_STORAGE);
    state.key = null;
    state.endpoints = [];
    state.endpointId = null;
    state.selectedId = null;
    state.pageKeys = [null];
    state.nextPageKey = null;
    hideSecret();
    $('endpoints-table').querySelector('tbody')?.replaceChildren();
    $('endpoint-detail').hidden = true;
    $('log-table').querySelector('tbody')?.replaceChildren();
    delete $('log-table').dataset.loaded;
    $('detail').hidden = true;
    $('replay-result').textContent = '';
    window.clearTimeout(state.watchTimer);
    if (state.chart) state.chart.destroy();
    state.chart = null;
    clearWallet();
    /** @type {HTMLInputElement} */ ($('wallet-query')).value = '';
    $('app-view').hidden = true;
    $('who').hidden = true;
    $('sign-in-view').hidden = false;
    /** @type {HTMLInputElement} */ ($('api-key')).value = '';
    $('sign-in-error').textContent = message || '';
    $('api-key').focus();
  }

  function showApp() {
    $('sign-in-view').hidden = true;
    $('sign-in-error').textContent = '';
    $('app-view').hidden = false;
    $('who').hidden = false;
    $('who-role').textContent = state.role;
    $('who-key').textContent = `${(state.key || '').slice(0, 13)}…`;
    for (const element of document.querySelectorAll('.admin-only')) {
      /** @type {HTMLElement} */ (element).hidden = state.role !== 'admin';
    }
    // A replay usually looks back over the last day; the admin narrows from there.
    const replaySince = /** @type {HTMLInputElement} */ ($('replay-since'));
    if (!replaySince.value) replaySince.value = toLocalInput(new Date(Date.now() - DAY_MS));
    renderEndpoints();
    showView('log');
    // Keyboard users continue from the top of the signed-in page, not from a vanished form.
    $('main').focus();
  }

  // ---- views ---------------------------------------------------------------------------------

  /** @param {string} name */
  function showView(name) {
    for (const button of document.querySelectorAll('.tabs button')) {
      const active = /** @type {HTMLElement} */ (button).dataset.view === name;
      if (active) button.setAttribute('aria-current', 'page');
      else button.removeAttribute('aria-current');
    }
    for (const view of ['endpoints', 'log', 'stats', 'wallet']) $(`${view}-view`).hidden = view !== name;
    // A one-time secret is not left on screen once its view is left.
    if (name !== 'endpoints') hideSecret();
    if (name === 'endpoints') void loadEndpoints();
    if (name === 'log') void loadLog();
    if (name === 'stats') void loadStats();
  }

  // ---- endpoints -----------------------------------------------------------------------------

  /** Every endpoint, following nextPageKey (an organization has at most 20). @param {string|null} key */
  async function fetchEndpoints(key) {
    /** @type {WebhookEndpoint[]} */
    const endpoints = [];
    /** @type {string|null} */
    let pageKey = null;
    do {
      const answer = /** @type {EndpointPage} */ (await api('GET', `${ENDPOINTS}${query({ pageSize: '100', pageKey })}`, { key }));
      endpoints.push(...answer.endpoints);
      pageKey = answer.nextPageKey;
    } while (pageKey);
    return endpoints;
  }

  async function loadEndpoints() {
    const load = endpointLoads.start();
    try {
      const endpoints = await fetchEndpoints(state.key);
      if (!endpointLoads.isLatest(load)) return;
      state.endpoints = endpoints;
      renderEndpoints();
    } catch (error) {
      if (endpointLoads.isLatest(load)) say(`Could not load the endpoints: ${describe(error)}`, true);
    } finally {
      endpointLoads.end(load);
    }
  }

  /** @param {string} id */
  function endpointById(id) {
    return state.endpoints.find((endpoint) => endpoint.id === id);
  }

  /** How an endpoint is named in lists and selects: its description, else its url. @param {WebhookEndpoint} endpoint */
  function endpointName(endpoint) {
    const name = endpoint.description || endpoint.url || 'no url yet';
    return endpoint.isDefault ? `${name} (default)` : name;
  }

  /** @param {WebhookEndpoint} endpoint @returns {{text: string, className: string}} */
  function endpointStatus(endpoint) {
    if (endpoint.enabled) return { text: 'enabled', className: 'pill succeeded' };
    // The service switched it off itself (`failing`): say so, it is why nothing arrives.
    if (endpoint.disabledReason) return { text: `switched off: ${endpoint.disabledReason}`, className: 'pill failed' };
    return { text: 'disabled', className: 'pill off' };
  }

  /** @param {WebhookEndpoint} endpoint */
  function rateText(endpoint) {
    return endpoint.rateLimitPerSecond ? `at most ${endpoint.rateLimitPerSecond} attempts per second` : 'unlimited';
  }

  /** @param {WebhookEndpoint} endpoint */
  function headersText(endpoint) {
    const entries = Object.entries(endpoint.headers ?? {});
    return entries.length ? entries.map(([name, value]) => `${name}: ${value}`).join('; ') : 'none';
  }

  /**
   * The custom headers typed in the form, one `Name: value` per line; the service checks them and
   * names any it refuses. @param {string} text @returns {Record<string, string>}
   */
  function parseHeaderLines(text) {
    /** @type {Record<string, string>} */
    const headers = {};
    for (const line of text.split(/\r?\n/)) {
      if (!line.trim()) continue;
      const colon = line.indexOf(':');
      if (colon < 0) headers[line.trim()] = '';
      else headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    }
    return headers;
  }

  /** @param {WebhookEndpoint} endpoint */
  function filtersText(endpoint) {
    const contracts = endpoint.filters.contractAddresses;
    if (!contracts) return 'none';
    const shown = contracts.slice(0, 3).join(', ');
    return `nft and transaction of ${plural(contracts.length, 'contract')}: ${shown}${contracts.length > 3 ? `, and ${contracts.length - 3} more` : ''}`;
  }

  /** @param {WebhookEndpoint} endpoint */
  function secretText(endpoint) {
    if (!endpoint.hasSharedSecret) return 'not set';
    return endpoint.previousSecretExpiresAtUtc
      ? `set; the previous one signs too until ${shortTime(endpoint.previousSecretExpiresAtUtc)} UTC`
      : 'set';
  }

  /** Which signatures the endpoint's webhooks carry; the public key in full, for the receiver to copy. @param {WebhookEndpoint} endpoint */
  function signingText(endpoint) {
    if (!endpoint.publicKey) return 'v1 (shared secret)';
    const previous = endpoint.previousPublicKey ? `; the previous key ${endpoint.previousPublicKey} signs too during the overlap` : '';
    return `v1 (shared secret) and v1a (Ed25519), public key ${endpoint.publicKey}${previous}`;
  }

  /** How the service authenticates to the receiver beyond signatures. @param {WebhookEndpoint} endpoint */
  function authText(endpoint) {
    if (!endpoint.auth) return 'none';
    const scope = endpoint.auth.scope ? `, scope ${endpoint.auth.scope}` : '';
    return `OAuth2 client credentials: client ${endpoint.auth.clientId} at ${endpoint.auth.tokenUrl}${scope}`;
  }

  /** The client certificate of mutual TLS, with when it must be renewed. @param {WebhookEndpoint} endpoint */
  function tlsText(endpoint) {
    if (!endpoint.tls) return 'none';
    return `${endpoint.tls.subject}, expires ${shortTime(endpoint.tls.notAfterUtc)} UTC`;
  }

  function renderEndpoints() {
    $('endpoints-table')
      .querySelector('tbody')
      ?.replaceChildren(
        ...state.endpoints.map((endpoint) => {
          const status = endpointStatus(endpoint);
          const open = el('button', {
            text: 'Details',
            attrs: { type: 'button', 'data-endpoint': endpoint.id, 'aria-label': `Details of endpoint ${endpointName(endpoint)}` },
          });
          open.addEventListener('click', () => openEndpoint(endpoint.id));
          const name = [el('span', { text: endpoint.url || 'no url yet', className: 'mono' })];
          if (endpoint.isDefault) name.push(el('span', { text: 'default', className: 'badge marker', attrs: { 'data-default': 'true' } }));
          if (endpoint.description) name.push(el('span', { text: endpoint.description, className: 'note block' }));
          const row = el('tr', { attrs: { 'data-id': endpoint.id } }, [
            cell('Endpoint', name, 'url endpoint'),
            cell('Types', endpoint.webhookTypes.join(', ') || 'none'),
            cell('Filters', filtersText(endpoint), 'wrap'),
            cell('Status', el('span', { text: status.text, className: status.className })),
            cell('Shared secret', secretText(endpoint)),
            cell('', open),
          ]);
          if (endpoint.id === state.endpointId) row.classList.add('selected');
          return row;
        }),
      );
    // Every endpoint select (log filter, replay, statistics) offers the same list.
    for (const select of /** @type {NodeListOf<HTMLSelectElement>} */ (document.querySelectorAll('select.endpoint-choice'))) {
      const current = select.value;
      select.replaceChildren(
        el('option', { text: 'any', attrs: { value: '' } }),
        ...state.endpoints.map((endpoint) => el('option', { text: endpointName(endpoint), attrs: { value: endpoint.id } })),
      );
      select.value = endpointById(current) ? current : '';
    }
    renderEndpointDetail();
  }

  /** @param {string} id */
  function openEndpoint(id) {
    state.endpointId = id;
    for (const row of document.querySelectorAll('#endpoints-table tbody tr')) {
      row.classList.toggle('selected', /** @type {HTMLElement} */ (row).dataset.id === id);
    }
    renderEndpointDetail();
    const detail = $('endpoint-detail');
    detail.focus();
  }

  function renderEndpointDetail() {
    const detail = $('endpoint-detail');
    const endpoint = state.endpointId ? endpointById(state.endpointId) : undefined;
    detail.hidden = !endpoint;
    if (!endpoint) return;
    detail.dataset.id = endpoint.id;
    $('endpoint-title').textContent = `Endpoint ${endpointName(endpoint)}`;
    const status = endpointStatus(endpoint);
    renderFacts($('endpoint-facts'), [
      ['URL', endpoint.url || 'not set'],
      ['Default', endpoint.isDefault ? 'yes: the webhook configuration' : 'no'],
      ['Description', endpoint.description || '—'],
      ['Status', el('span', { text: status.text, className: status.className })],
      ['Types', endpoint.webhookTypes.join(', ') || 'none'],
      ['Contracts', endpoint.filters.contractAddresses ? endpoint.filters.contractAddresses.join(', ') : 'every contract'],
      ['Rate limit', rateText(endpoint)],
      ['Custom headers', headersText(endpoint)],
      ['Ordering', endpoint.ordering === 'resource' ? 'resource: one at a time per resource, in event order, numbered' : 'none'],
      ['Shared secret', secretText(endpoint)],
      ['Signatures', signingText(endpoint)],
      ['Receiver auth', authText(endpoint)],
      ['Client certificate', tlsText(endpoint)],
      ['Id', endpoint.id],
      ['Created (UTC)', shortTime(endpoint.createdAtUtc)],
      ['Updated (UTC)', shortTime(endpoint.updatedAtUtc)],
    ]);
    const testType = /** @type {HTMLSelectElement} */ ($('test-type'));
    const current = testType.value;
    // A test send goes out whatever the endpoint subscribes to; its own types come first.
    const types = [...endpoint.webhookTypes, ...WEBHOOK_TYPES.filter((type) => !endpoint.webhookTypes.includes(type))];
    testType.replaceChildren(...types.map((type) => el('option', { text: type, attrs: { value: type } })));
    testType.value = types.includes(current) && detail.dataset.shown === endpoint.id ? current : types[0];
    detail.dataset.shown = endpoint.id;
    $('endpoint-toggle').textContent = endpoint.enabled ? 'Disable endpoint' : 'Enable endpoint';
    $('toggle-note').textContent = endpoint.enabled
      ? 'While disabled it receives no new webhooks.'
      : 'Once enabled it receives new webhooks again; replay what it missed from the delivery log.';
  }

  /** Shows a generated secret once, where it cannot be missed. @param {WebhookEndpoint|undefined} endpoint @param {string} secret */
  function showSecret(endpoint, secret) {
    const box = $('secret-box');
    const input = /** @type {HTMLTextAreaElement} */ ($('new-secret'));
    $('secret-endpoint').textContent = endpoint ? endpoint.url || endpointName(endpoint) : '';
    input.value = secret;
    box.hidden = false;
    box.scrollIntoView({ block: 'nearest' });
    input.focus();
    input.select();
  }

  function hideSecret() {
    /** @type {HTMLTextAreaElement} */ ($('new-secret')).value = '';
    $('secret-endpoint').textContent = '';
    $('secret-box').hidden = true;
  }

  /** @param {SubmitEvent} event */
  async function sendTest(event) {
    event.preventDefault();
    const endpoint = state.endpointId ? endpointById(state.endpointId) : undefined;
    if (!endpoint) return;
    const webhookType = /** @type {HTMLSelectElement} */ ($('test-type')).value;
    try {
      const answer = /** @type {{id: string}} */ (
        await api('POST', `${ENDPOINTS}/${encodeURIComponent(endpoint.id)}/test`, { body: webhookType ? { webhookType } : {} })
      );
      say(`Test webhook ${answer.id} queued for ${endpointName(endpoint)}: see it in the delivery log.`);
    } catch (error) {
      say(`Test send refused: ${describe(error)}`, true);
    }
  }

  /** @param {SubmitEvent} event */
  async function rotateSecret(event) {
    event.preventDefault();
    const endpoint = state.endpointId ? endpointById(state.endpointId) : undefined;
    if (!endpoint) return;
    const seconds = Number(/** @type {HTMLInputElement} */ ($('rotate-valid')).value);
    hideSecret();
    try {
      const answer = /** @type {{sharedSecret?: string, previousSecretExpiresAtUtc: string|null}} */ (
        await api('POST', `${ENDPOINTS}/${encodeURIComponent(endpoint.id)}/rotate-secret`, {
          body: { previousSecretValidSeconds: seconds },
        })
      );
      say(
        `Secret of ${endpointName(endpoint)} rotated; the previous one stays valid until ${shortTime(answer.previousSecretExpiresAtUtc)} UTC.`,
      );
      await loadEndpoints();
      if (answer.sharedSecret) showSecret(endpoint, answer.sharedSecret);
    } catch (error) {
      say(`Rotation refused: ${describe(error)}`, true);
    }
  }

  async function toggleEndpoint() {
    const endpoint = state.endpointId ? endpointById(state.endpointId) : undefined;
    if (!endpoint) return;
    const button = /** @type {HTMLButtonElement} */ ($('endpoint-toggle'));
    button.disabled = true;
    try {
      const answer = /** @type {WebhookEndpoint} */ (
        await api('PATCH', `${ENDPOINTS}/${encodeURIComponent(endpoint.id)}`, { body: { enabled: !endpoint.enabled } })
      );
      say(`Endpoint ${endpointName(answer)} ${answer.enabled ? 'enabled' : 'disabled'}.`);
      await loadEndpoints();
    } catch (error) {
      say(`Change refused: ${describe(error)}`, true);
    } finally {
      button.disabled = false;
    }
  }

  /** @param {SubmitEvent} event */
  async function createEndpoint(event) {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ ($('create-form'));
    const data = new FormData(form);
    const contracts = formText(data, 'contractAddresses')
      .split(/[\s,]+/)
      .filter(Boolean);
    /** @type {Record<string, unknown>} */
    const body = { url: formText(data, 'url').trim(), webhookTypes: data.getAll('webhookTypes') };
    const description = formText(data, 'description').trim();
    if (description) body.description = description;
    if (contracts.length) body.filters = { contractAddresses: contracts };
    const rate = formText(data, 'rateLimitPerSecond').trim();
    // Sent as typed when it is not a whole number, so the service's answer says what is wrong.
    if (rate) body.rateLimitPerSecond = /^\d+$/.test(rate) ? Number(rate) : rate;
    const headers = parseHeaderLines(formText(data, 'headers'));
    if (Object.keys(headers).length) body.headers = headers;
    const ordering = formText(data, 'ordering');
    if (ordering && ordering !== 'none') body.ordering = ordering;
    try {
      const created = /** @type {WebhookEndpoint & {sharedSecret?: string}} */ (await api('POST', ENDPOINTS, { body }));
      form.reset();
      say(`Endpoint ${endpointName(created)} added.`);
      state.endpointId = created.id;
      await loadEndpoints();
      if (created.sharedSecret) showSecret(created, created.sharedSecret);
    } catch (error) {
      say(`Endpoint not added: ${describe(error)}`, true);
    }
  }

  // ---- delivery log --------------------------------------------------------------------------

  function filters() {
    const form = /** @type {HTMLFormElement} */ ($('filter-form'));
    const data = new FormData(form);
    const value = (/** @type {string} */ name) => formText(data, name);
    return {
      status: value('status'),
      webhookType: value('webhookType'),
      endpointId: value('endpointId'),
      since: fromLocalInput(value('since')),
      until: fromLocalInput(value('until')),
      pageSize: value('pageSize') || '50',
    };
  }

  async function loadLog() {
    const f = filters();
    const pageKey = state.pageKeys[state.pageKeys.length - 1];
    const load = logLoads.start();
    try {
      const answer = /** @type {WebhookPage} */ (
        await api(
          'GET',
          `${ORG}/webhooks${query({
            status: f.status,
            endpointId: f.endpointId,
            webhookType: f.webhookType,
            since: f.since ? utc(f.since) : '',
            until: f.until ? utc(f.until) : '',
            pageSize: f.pageSize,
            pageKey,
          })}`,
        )
      );
      // An endpoint added since the list was read (elsewhere) is named, not shown as unknown.
      if (answer.webhooks.some((w) => !endpointById(w.endpointId))) await loadEndpoints();
      if (!logLoads.isLatest(load)) return;
      state.nextPageKey = answer.nextPageKey;
      // Every filter is applied by the server, so each page is full and the page keys stay exact.
      renderLog(answer.webhooks);
    } catch (error) {
      if (logLoads.isLatest(load)) say(`Could not load the delivery log: ${describe(error)}`, true);
    } finally {
      logLoads.end(load);
    }
  }

  /** The endpoint a webhook went to, by name; its id when it has been deleted since. @param {string} id */
  function endpointOf(id) {
    const endpoint = endpointById(id);
    return endpoint ? endpointName(endpoint) : `deleted endpoint ${id}`;
  }

  /** @param {WebhookSummary[]} webhooks */
  function renderLog(webhooks) {
    const body = $('log-table').querySelector('tbody');
    body?.replaceChildren(
      ...webhooks.map((w) => {
        const open = el('button', {
          text: 'Attempts',
          attrs: { type: 'button', 'aria-label': `Attempts of webhook ${w.id}`, 'data-id': w.id },
        });
        open.addEventListener('click', () => void openWebhook(w.id));
        const row = el('tr', { attrs: { 'data-id': w.id, 'data-endpoint': w.endpointId } }, [
          cell('Created (UTC)', shortTime(w.createdAtUtc)),
          cell('Endpoint', endpointOf(w.endpointId), 'url'),
          cell('Type', w.webhookType),
          cell('Resource', `${w.resourceType} ${w.action}`),
          cell('Status', el('span', { text: w.status, className: `pill ${w.status}` })),
          cell('Attempts', String(w.attemptCount)),
          cell('Last answer', w.lastResponseStatus === null ? '—' : String(w.lastResponseStatus)),
          cell('Next retry', shortTime(w.nextAttemptAtUtc)),
          cell('', open),
        ]);
        if (w.id === state.selectedId) row.classList.add('selected');
        return row;
      }),
    );
    $('log-empty').hidden = webhooks.length > 0;
    $('log-table').dataset.loaded = 'true';
    /** @type {HTMLButtonElement} */ ($('page-newer')).disabled = state.pageKeys.length <= 1;
    /** @type {HTMLButtonElement} */ ($('page-older')).disabled = !state.nextPageKey;
    $('page-label').textContent = `Page ${state.pageKeys.length}`;
  }

  /** @param {string} id */
  async function openWebhook(id) {
    state.selectedId = id;
    window.clearTimeout(state.watchTimer);
    for (const row of document.querySelectorAll('#log-table tbody tr')) {
      row.classList.toggle('selected', /** @type {HTMLElement} */ (row).dataset.id === id);
    }
    try {
      const webhook = /** @type {WebhookDetail} */ (await api('GET', `${ORG}/webhooks/${encodeURIComponent(id)}`));
      renderWebhook(webhook);
      const detail = $('detail');
      detail.hidden = false;
      detail.focus();
    } catch (error) {
      say(`Could not load webhook ${id}: ${describe(error)}`, true);
    }
  }

  /** @param {WebhookDetail} webhook */
  function renderWebhook(webhook) {
    $('detail-title').textContent = `Webhook ${webhook.id}`;
    /** @type {[string, string|Node][]} */
    const facts = [
      ['Status', el('span', { text: webhook.status, className: `pill ${webhook.status}` })],
      ['Endpoint', endpointOf(webhook.endpointId)],
      ['Type', webhook.webhookType],
      ['Resource', `${webhook.resourceType} ${webhook.resourceId}`],
      ['Action', webhook.action],
      ['Created (UTC)', shortTime(webhook.createdAtUtc)],
      ['Attempts', String(webhook.attemptCount)],
      ['Event', webhook.eventId],
    ];
    renderFacts($('detail-facts'), facts);

    const items = webhook.attempts.map((attempt) => {
      const ok = attempt.responseStatus !== null && attempt.responseStatus >= 200 && attempt.responseStatus < 300 && !attempt.error;
      const parts = [
        `Attempt ${attempt.attempt}`,
        shortTime(attempt.startedAtUtc),
        attempt.responseStatus === null ? 'no answer' : `HTTP ${attempt.responseStatus}`,
        `${attempt.durationMs} ms`,
      ];
      const item = el('li', { className: ok ? 'ok' : 'bad', attrs: { 'data-attempt': String(attempt.attempt) } }, [
        el('strong', { text: parts[0] }),
        ` · ${parts.slice(1).join(' · ')}`,
      ]);
      if (attempt.error) item.append(el('div', { text: `Error: ${attempt.error}`, className: 'mono' }));
      // What the receiver answered often says why it refused; shown as text, never as markup.
      if (attempt.responseBody) item.append(el('pre', { text: attempt.responseBody, className: 'mono response-body' }));
      return item;
    });
    if (webhook.status === 'pending' && webhook.nextAttemptAtUtc) {
      items.push(el('li', { className: 'next', text: `Next retry ${shortTime(webhook.nextAttemptAtUtc)} UTC` }));
    }
    if (items.length === 0) items.push(el('li', { text: 'No attempt yet.' }));
    $('attempts').replaceChildren(...items);
    $('payload').textContent = JSON.stringify(webhook.payload, null, 2);
  }

  /** After a redelivery, refresh the detail until the new attempt appears (or give up quietly). */
  async function redeliver() {
    const id = state.selectedId;
    if (!id) return;
    const button = /** @type {HTMLButtonElement} */ ($('redeliver'));
    button.disabled = true;
    try {
      const before = /** @type {WebhookDetail} */ (await api('GET', `${ORG}/webhooks/${encodeURIComponent(id)}`));
      await api('POST', `${ORG}/webhooks/${encodeURIComponent(id)}/redeliver`);
      say(`Webhook ${id} queued for redelivery.`);
      const deadline = Date.now() + REDELIVER_WATCH_MS;
      const watch = async () => {
        if (state.selectedId !== id || !state.key) return;
        const now = /** @type {WebhookDetail} */ (await api('GET', `${ORG}/webhooks/${encodeURIComponent(id)}`));
        renderWebhook(now);
        // The service records an attempt as it starts and fills in the answer when it ends.
        const latest = now.attempts[now.attempts.length - 1];
        const answered = latest && (latest.responseStatus !== null || latest.durationMs > 0);
        const succeeded = answered && latest.responseStatus !== null && latest.responseStatus >= 200 && latest.responseStatus < 300;
        // A success is shown once the webhook's status says so too (it is written just after).
        const settled = answered && (!succeeded || now.status === 'succeeded');
        if (now.attempts.length > before.attempts.length && settled) {
          say(`Webhook ${id} redelivered: attempt ${latest.attempt} recorded.`);
          void loadLog();
          return;
        }
        if (Date.now() < deadline) state.watchTimer = window.setTimeout(() => void watch().catch(() => undefined), 500);
      };
      await watch();
    } catch (error) {
      say(`Redelivery failed: ${describe(error)}`, true);
    } finally {
      button.disabled = false;
    }
  }

  /** @param {SubmitEvent} event */
  async function replay(event) {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ ($('replay-form'));
    const result = $('replay-result');
    const data = new FormData(form);
    const since = fromLocalInput(formText(data, 'since'));
    const until = fromLocalInput(formText(data, 'until'));
    result.classList.remove('bad');
    if (!since) {
      result.textContent = 'Choose the start of the time range to replay.';
      result.classList.add('bad');
      return;
    }
    /** @type {Record<string, unknown>} */
    const body = { since: utc(since), status: formText(data, 'status') || 'failed' };
    if (until) body.until = utc(until);
    const endpointId = formText(data, 'endpointId');
    if (endpointId) body.endpointId = endpointId;
    const types = data.getAll('webhookTypes');
    if (types.length) body.webhookTypes = types;
    const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));
    button.disabled = true;
    result.textContent = '';
    try {
      const answer = /** @type {{count: number}} */ (await api('POST', `${ORG}/webhooks/replay`, { body }));
      result.textContent = `${plural(answer.count, 'webhook')} will be sent again.`;
      void loadLog();
    } catch (error) {
      // Too many at once (REPLAY_TOO_LARGE) and the organization's replay budget (429) are for the
      // admin to act on: narrow the window, or wait as long as the message says.
      result.textContent = `Replay refused: ${describe(error)}`;
      result.classList.add('bad');
    } finally {
      button.disabled = false;
    }
  }

  // ---- statistics ----------------------------------------------------------------------------

  async function loadStats() {
    const note = $('stats-note');
    const endpointId = /** @type {HTMLSelectElement} */ ($('stats-endpoint')).value;
    const since = new Date(Date.now() - DAY_MS);
    const load = statsLoads.start();
    try {
      const answer = /** @type {{buckets: StatsBucket[]}} */ (
        await api('GET', `${ORG}/webhooks/stats${query({ since: utc(since), bucket: '1h', endpointId })}`)
      );
      if (!statsLoads.isLatest(load)) return;
      note.hidden = true;
      renderStats(answer.buckets);
    } catch (error) {
      if (!statsLoads.isLatest(load)) return;
      if (state.chart) state.chart.destroy();
      state.chart = null;
      $('chart').replaceChildren();
      $('stats-summary').textContent = '';
      $('stats-table').querySelector('tbody')?.replaceChildren();
      delete $('stats-table').dataset.loaded;
      note.textContent = `Could not load the statistics: ${describe(error)}`;
      note.hidden = false;
    } finally {
      statsLoads.end(load);
    }
  }

  /** "2026-11-23 15:00" for the bucket that starts at 15:00 UTC. @param {string} startUtc */
  function hourOf(startUtc) {
    return startUtc.slice(0, 16).replace('T', ' ');
  }

  /** @param {number|null} ms */
  function latency(ms) {
    return ms === null ? '—' : `${ms} ms`;
  }

  /** @param {StatsBucket[]} buckets */
  function renderStats(buckets) {
    const totals = buckets.reduce(
      (sum, b) => ({ succeeded: sum.succeeded + b.succeeded, failed: sum.failed + b.failed, retried: sum.retried + b.retried }),
      { succeeded: 0, failed: 0, retried: 0 },
    );
    const summary = `${totals.succeeded} succeeded, ${totals.failed} failed and ${totals.retried} retried in the last 24 hours.`;
    $('stats-summary').textContent = summary;
    // The numbers behind the chart, for screen readers and anyone who wants them exactly.
    const active = buckets.filter((b) => b.succeeded + b.failed + b.retried > 0);
    $('stats-table')
      .querySelector('tbody')
      ?.replaceChildren(
        ...active.map((b) =>
          el('tr', { attrs: { 'data-start': b.startUtc } }, [
            cell('Hour from (UTC)', hourOf(b.startUtc)),
            cell('Succeeded', String(b.succeeded)),
            cell('Failed', String(b.failed)),
            cell('Retried', String(b.retried)),
            cell('p50 latency', latency(b.p50Ms)),
            cell('p99 latency', latency(b.p99Ms)),
          ]),
        ),
        el('tr', { className: 'total', attrs: { 'data-total': 'true' } }, [
          cell('Hour from (UTC)', 'All 24 hours'),
          cell('Succeeded', String(totals.succeeded)),
          cell('Failed', String(totals.failed)),
          cell('Retried', String(totals.retried)),
          cell('p50 latency', ''),
          cell('p99 latency', ''),
        ]),
      );
    $('stats-table').dataset.loaded = 'true';
    $('chart').setAttribute('aria-label', `Chart of succeeded and failed webhooks per hour, with p50 and p99 latency: ${summary}`);
    renderChart(buckets);
  }

  /** @param {StatsBucket[]} buckets */
  function renderChart(buckets) {
    const uPlot = /** @type {{uPlot?: ChartLibrary}} */ (/** @type {unknown} */ (window)).uPlot;
    const container = $('chart');
    if (state.chart) state.chart.destroy();
    state.chart = null;
    container.replaceChildren();
    if (!uPlot || buckets.length === 0) return;
    const HOUR = 3600;
    const starts = buckets.map((b) => Math.floor(new Date(b.startUtc).getTime() / 1000 / HOUR) * HOUR);
    // Each hour's two bars stand side by side around its middle; latencies are points on lines.
    const data = [
      starts.map((start) => start + HOUR / 2),
      buckets.map((b) => b.succeeded),
      buckets.map((b) => b.failed),
      buckets.map((b) => b.p50Ms),
      buckets.map((b) => b.p99Ms),
    ];
    const width = Math.max(280, container.clientWidth);
    state.chart = new uPlot(
      {
        width,
        height: width < 600 ? 240 : 320,
        // UTC on the axis, as everywhere else on the page.
        tzDate: (/** @type {number} */ seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        scales: {
          x: { time: true, range: () => [starts[0], starts[starts.length - 1] + HOUR] },
          count: { range: (/** @type {unknown} */ _chart, /** @type {number} */ _min, /** @type {number} */ max) => [0, Math.max(1, max)] },
        },
        series: [
          {},
          {
            label: 'succeeded',
            stroke: '#2e7d32',
            fill: 'rgba(46,125,50,.6)',
            scale: 'count',
            paths: uPlot.paths.bars({ align: -1, size: [0.4, 24] }),
            points: { show: false },
          },
          {
            label: 'failed',
            stroke: '#c62828',
            fill: 'rgba(198,40,40,.6)',
            scale: 'count',
            paths: uPlot.paths.bars({ align: 1, size: [0.4, 24] }),
            points: { show: false },
          },
          { label: 'p50 ms', stroke: '#0b57d0', width: 2, scale: 'ms' },
          { label: 'p99 ms', stroke: '#7b1fa2', width: 2, dash: [6, 4], scale: 'ms' },
        ],
        axes: [{}, { scale: 'count', label: 'webhooks' }, { scale: 'ms', side: 1, label: 'latency (ms)', grid: { show: false } }],
      },
      data,
      container,
    );
  }

  window.addEventListener('resize', () => {
    if (state.chart) {
      const width = Math.max(280, $('chart').clientWidth);
      state.chart.setSize({ width, height: width < 600 ? 240 : 320 });
    }
  });

  // ---- wallets -------------------------------------------------------------------------------

  function clearWallet() {
    state.wallet = null;
    state.holdings = [];
    state.nftNextPageKey = null;
    state.activityNextPageKey = null;
    $('wallet-panel').hidden = true;
    $('wallet-choices').hidden = true;
    $('wallet-choices').replaceChildren();
    $('wallet-error').textContent = '';
    $('nft-grid').replaceChildren();
    delete $('nft-grid').dataset.loaded;
    $('nft-detail').hidden = true;
    $('activity-table').querySelector('tbody')?.replaceChildren();
    delete $('activity-table').dataset.loaded;
  }

  /** A wallet by its id, or the wallets at an address (one opens at once, several are offered). @param {SubmitEvent} event */
  async function lookUpWallet(event) {
    event.preventDefault();
    const text = formText(new FormData(/** @type {HTMLFormElement} */ (event.target)), 'wallet').trim();
    clearWallet();
    if (!UUID.test(text) && !ADDRESS.test(text)) {
      $('wallet-error').textContent = 'Enter a wallet id (a UUID) or an address (0x and 40 hex digits).';
      return;
    }
    try {
      if (UUID.test(text)) {
        openWallet(/** @type {Wallet} */ (await api('GET', `/v1/wallets/${encodeURIComponent(text)}`)));
        return;
      }
      const page = /** @type {WalletPage} */ (await api('GET', `/v1/wallets${query({ address: text, pageSize: '100' })}`));
      if (page.wallets.length === 0) {
        $('wallet-error').textContent = `No wallet of this organization is at ${text}.`;
      } else if (page.wallets.length === 1) {
        openWallet(page.wallets[0]);
      } else {
        $('wallet-choices').replaceChildren(
          ...page.wallets.map((wallet) => {
            const button = el('button', {
              text: `${wallet.name || 'unnamed'} · ${wallet.id}`,
              attrs: { type: 'button', 'data-wallet': wallet.id },
            });
            button.addEventListener('click', () => {
              $('wallet-choices').hidden = true;
              openWallet(wallet);
            });
            return el('li', {}, [button]);
          }),
        );
        $('wallet-choices').hidden = false;
      }
    } catch (error) {
      $('wallet-error').textContent =
        error instanceof ApiError && error.status === 403
          ? 'This key cannot read wallets: sign in with an admin key.'
          : error instanceof ApiError && error.status === 404
            ? 'No such wallet in this organization.'
            : `Lookup failed: ${describe(error)}`;
    }
  }

  /** @param {Wallet} wallet */
  function openWallet(wallet) {
    state.wallet = wallet;
    $('wallet-panel').hidden = false;
    $('wallet-panel').dataset.id = wallet.id;
    renderFacts($('wallet-facts'), [
      ['Name', wallet.name || '—'],
      ['Wallet id', el('span', { className: 'mono', text: wallet.id })],
      ['Address', el('span', { className: 'mono', text: wallet.address || '—' })],
      ['Created', shortTime(wallet.createdAtUtc)],
    ]);
    void loadNfts(false);
    void loadActivity(false);
  }

  /** A page of the grid: the first one, or the next after what is shown. @param {boolean} more */
  async function loadNfts(more) {
    const wallet = state.wallet;
    if (!wallet) return;
    const load = nftLoads.start();
    try {
      const pageKey = more ? state.nftNextPageKey : null;
      const page = /** @type {HoldingPage} */ (
        await api('GET', `/v2/wallets/${wallet.id}/nft-balances${query({ pageSize: String(NFT_PAGE), pageKey })}`)
      );
      if (!nftLoads.isLatest(load) || state.wallet !== wallet) return;
      state.holdings = more ? [...state.holdings, ...page.nftTokenBalances] : page.nftTokenBalances;
      state.nftNextPageKey = page.nextPageKey;
      const cards = page.nftTokenBalances.map(nftCard);
      if (more) $('nft-grid').append(...cards);
      else $('nft-grid').replaceChildren(...cards);
      $('nft-empty').hidden = state.holdings.length > 0;
      $('nft-more').hidden = !page.nextPageKey;
      $('nft-grid').dataset.loaded = 'true';
    } catch (error) {
      if (nftLoads.isLatest(load)) say(`Could not load the NFTs: ${describe(error)}`, true);
    } finally {
      nftLoads.end(load);
    }
  }

  /** The token's name, or its contract and id when it has none. @param {Token} token */
  function tokenName(token) {
    return token.metadata.name || `#${token.blockchainTokenId}`;
  }

  /**
   * The token's picture: its thumbnail (the service's own, on this origin), or a placeholder that
   * says why there is none. @param {Token} token @param {'small'|'medium'|'large'} size
   */
  function picture(token, size) {
    const thumbnails = token.media.thumbnails;
    if (token.media.status === 'ok' && thumbnails) {
      const img = /** @type {HTMLImageElement} */ (el('img', { attrs: { src: thumbnails[size], alt: tokenName(token), loading: 'lazy' } }));
      if (token.media.width && token.media.height) {
        const width = Math.min(token.media.width, size === 'large' ? 1024 : 256);
        img.width = width;
        img.height = Math.max(1, Math.round((token.media.height * width) / token.media.width));
      }
      return img;
    }
    const reason =
      token.media.status === 'none'
        ? 'no image'
        : token.media.status === 'pending'
          ? 'image on its way'
          : `image failed: ${token.media.error || 'unknown'}`;
    return el('div', { className: 'placeholder', text: reason, attrs: { role: 'img', 'aria-label': `${tokenName(token)}: ${reason}` } });
  }

  /** @param {Holding} holding */
  function nftCard(holding) {
    const token = holding.token;
    const spam = Boolean(token.spam && token.spam.isSpam);
    const button = el('button', { attrs: { type: 'button', 'data-token': token.id } }, [
      picture(token, 'medium'),
      el('span', { className: 'nft-name', text: tokenName(token) }),
      el('span', { className: 'note', text: holding.amount === '1' ? '' : `× ${holding.amount}` }),
    ]);
    if (spam) button.append(el('span', { className: 'badge spam', text: 'spam' }));
    button.addEventListener('click', () => openNft(token.id));
    return el('li', { className: spam ? 'nft spam' : 'nft', attrs: { 'data-token': token.id, 'data-media': token.media.status } }, [
      button,
    ]);
  }

  /** @param {string} tokenId */
  function openNft(tokenId) {
    const holding = state.holdings.find((h) => h.token.id === tokenId);
    if (!holding) return;
    const { token } = holding;
    const media = token.media;
    $('nft-title').textContent = tokenName(token);
    $('nft-picture').replaceChildren(picture(token, 'large'));
    /** @type {[string, string|Node][]} */
    const facts = [
      ['Token id', el('span', { className: 'mono', text: token.id })],
      ['Contract', el('span', { className: 'mono', text: token.contractAddress })],
      ['Token number', el('span', { className: 'mono', text: token.blockchainTokenId })],
      ['Chain', token.chainId === null ? 'recorded through the API' : String(token.chainId)],
      ['Held', holding.amount],
      ['Description', token.metadata.description || '—'],
      [
        'Image',
        media.status === 'ok'
          ? `${media.width} × ${media.height}, ${media.contentType}`
          : media.status + (media.error ? ` (${media.error})` : ''),
      ],
      ['Metadata', token.metadataStatus + (token.metadataError ? ` (${token.metadataError})` : '')],
    ];
    if (token.spam) facts.push(['Spam', token.spam.isSpam ? `yes: ${token.spam.reasons.join(', ') || token.spam.source}` : 'no']);
    renderFacts($('nft-facts'), facts);
    $('nft-detail').dataset.id = token.id;
    $('nft-detail').hidden = false;
    $('nft-detail').focus();
  }

  /** The wallet's movements, newest first (GET /v1/wallets/{id}/transfers). @param {boolean} more */
  async function loadActivity(more) {
    const wallet = state.wallet;
    if (!wallet) return;
    const load = activityLoads.start();
    const note = $('activity-note');
    try {
      const pageKey = more ? state.activityNextPageKey : null;
      const page = /** @type {TransferPage} */ (
        await api('GET', `/v1/wallets/${wallet.id}/transfers${query({ pageSize: String(ACTIVITY_PAGE), pageKey })}`)
      );
      if (!activityLoads.isLatest(load) || state.wallet !== wallet) return;
      const names = new Map(state.holdings.map((h) => [h.token.id, tokenName(h.token)]));
      const rows = page.transfers.map((transfer) => {
        const incoming = transfer.toWalletId === wallet.id;
        const outgoing = transfer.fromWalletId === wallet.id;
        return el('tr', { attrs: { 'data-id': transfer.id } }, [
          cell('When (UTC)', shortTime(transfer.createdAtUtc)),
          cell('Type', transfer.type),
          cell('Direction', incoming && outgoing ? 'within' : incoming ? 'in' : 'out'),
          cell(
            'Token',
            el('span', { className: names.has(transfer.tokenId) ? '' : 'mono', text: names.get(transfer.tokenId) || transfer.tokenId }),
          ),
          cell('Amount', transfer.amount),
          cell('Status', transfer.status || 'confirmed'),
        ]);
      });
      const body = $('activity-table').querySelector('tbody');
      if (more) body?.append(...rows);
      else body?.replaceChildren(...rows);
      state.activityNextPageKey = page.nextPageKey;
      $('activity-more').hidden = !page.nextPageKey;
      note.hidden = !(page.transfers.length === 0 && !more);
      note.textContent = 'No activity yet.';
      $('activity-table').dataset.loaded = 'true';
    } catch (error) {
      if (!activityLoads.isLatest(load)) return;
      note.hidden = false;
      // A service without the activity feed answers that no such route exists.
      note.textContent =
        error instanceof ApiError && error.code === 'ROUTE_NOT_FOUND'
          ? 'This service does not offer the activity feed (GET /v1/wallets/{walletId}/transfers).'
          : `Could not load the activity: ${describe(error)}`;
      $('activity-table').dataset.loaded = 'true';
    } finally {
      activityLoads.end(load);
    }
  }

  // ---- wiring --------------------------------------------------------------------------------

  /** Checkboxes named webhookTypes, one per type. @param {HTMLElement} container @param {boolean} checked @param {string} prefix */
  function typeChoices(container, checked, prefix) {
    container.replaceChildren(
      ...WEBHOOK_TYPES.map((type) => {
        const input = el('input', { attrs: { type: 'checkbox', name: 'webhookTypes', value: type, id: `${prefix}-${type}` } });
        /** @type {HTMLInputElement} */ (input).defaultChecked = checked;
        return el('label', { className: 'choice', attrs: { for: `${prefix}-${type}` } }, [input, ` ${type}`]);
      }),
    );
  }

  $('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($('api-key'));
    const key = input.value.trim();
    $('sign-in-error').textContent = '';
    signIn(key).catch((error) => {
      const message =
        error instanceof ApiError && error.status === 401
          ? `This API key was refused: ${describe(error)}`
          : error instanceof ApiError && error.status === 403
            ? 'This key has neither the admin nor the auditor role: use an organization admin or auditor key.'
            : `Sign-in failed: ${describe(error)}`;
      $('sign-in-error').textContent = message;
      input.focus();
    });
  });
  $('sign-out').addEventListener('click', () => signOut());
  for (const button of document.querySelectorAll('.tabs button')) {
    button.addEventListener('click', () => showView(/** @type {HTMLElement} */ (button).dataset.view || 'log'));
  }
  $('filter-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.pageKeys = [null];
    void loadLog();
  });
  $('page-older').addEventListener('click', () => {
    if (!state.nextPageKey) return;
    state.pageKeys.push(state.nextPageKey);
    void loadLog();
  });
  $('page-newer').addEventListener('click', () => {
    if (state.pageKeys.length > 1) state.pageKeys.pop();
    void loadLog();
  });
  $('log-refresh').addEventListener('click', () => void loadLog());
  $('redeliver').addEventListener('click', () => void redeliver());
  $('test-form').addEventListener('submit', (event) => void sendTest(/** @type {SubmitEvent} */ (event)));
  $('rotate-form').addEventListener('submit', (event) => void rotateSecret(/** @type {SubmitEvent} */ (event)));
  $('endpoint-toggle').addEventListener('click', () => void toggleEndpoint());
  $('create-form').addEventListener('submit', (event) => void createEndpoint(/** @type {SubmitEvent} */ (event)));
  $('secret-done').addEventListener('click', () => {
    hideSecret();
    // Focus must not stay on the button that just vanished: back to the endpoint it was for.
    const detail = $('endpoint-detail');
    (detail.hidden ? $('main') : detail).focus();
  });
  $('replay-form').addEventListener('submit', (event) => void replay(/** @type {SubmitEvent} */ (event)));
  $('wallet-form').addEventListener('submit', (event) => void lookUpWallet(/** @type {SubmitEvent} */ (event)));
  $('nft-more').addEventListener('click', () => void loadNfts(true));
  $('activity-more').addEventListener('click', () => void loadActivity(true));
  $('stats-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void loadStats();
  });

  const typeFilter = /** @type {HTMLSelectElement} */ ($('filter-type'));
  typeFilter.append(...WEBHOOK_TYPES.map((type) => el('option', { text: type, attrs: { value: type } })));
  typeChoices($('create-types'), true, 'create-type');
  typeChoices($('replay-types'), false, 'replay-type');

  // A reload of the tab keeps the session; a new tab or a closed one does not (sessionStorage).
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) {
    signIn(saved).catch((error) => signOut(`Please sign in again: ${describe(error)}`));
  } else {
    $('api-key').focus();
  }
})();
