// @ts-check
/**
 * The webhook portal (CONTRACT.md section 14). Everything it shows comes from the public API with
 * the signed-in user's key, sent as a Bearer header; the key lives in sessionStorage only (no
 * cookie, no server session). Loaded as an external file so the strict CSP (script-src 'self')
 * stays on; it never writes HTML from data (textContent only), so API data cannot inject markup.
 * Calls to APIs a server may not offer yet (endpoints, replay, statistics, secret rotation) treat
 * a 404 ROUTE_NOT_FOUND as "not available on this server".
 */
(() => {
  'use strict';

  const KEY_STORAGE = 'portal.apiKey';
  const ORG = '/api/organization/v1/current-organization';
  const WEBHOOK_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount'];
  /** How long the detail view watches for the attempt a redelivery makes. */
  const REDELIVER_WATCH_MS = 30000;

  // The answers this page reads (CONTRACT.md), with the fields it uses. Optional fields are those
  // a server without the newer APIs leaves out.
  /** @typedef {{detail?: string, title?: string, code?: unknown, errors?: unknown}} Problem */
  /** @typedef {{url: string|null, enabled: boolean, webhookTypes: string[], hasSharedSecret: boolean, updatedAtUtc: string, previousSecretExpiresAtUtc?: string|null}} WebhookConfig */
  /** @typedef {{id: string, url: string, isDefault: boolean, enabled: boolean, webhookTypes: string[], description?: string|null, disabledReason: string|null}} WebhookEndpoint */
  /** @typedef {{endpoints: WebhookEndpoint[]}} EndpointPage */
  /** @typedef {{apiKeys?: {keyPrefix?: unknown, roles?: unknown}[], nextPageKey: string|null}} ApiKeyPage */
  /** @typedef {{id: string, webhookType: string, resourceType: string, resourceId: string, action: string, status: string, attemptCount: number, createdAtUtc: string, lastAttemptAtUtc: string|null, nextAttemptAtUtc: string|null, lastResponseStatus: number|null, endpointId?: string}} WebhookSummary */
  /** @typedef {{webhooks: WebhookSummary[], nextPageKey: string|null}} WebhookPage */
  /** @typedef {{attempt: number, startedAtUtc: string, durationMs: number, responseStatus: number|null, error: string|null}} Attempt */
  /** @typedef {WebhookSummary & {eventId?: string, payload: unknown, attempts: Attempt[]}} WebhookDetail */
  /** @typedef {{startUtc: string, succeeded: number, failed: number, retried: number, p50Ms: number|null, p99Ms: number|null}} StatsBucket */
  /** The part of a uPlot chart this page uses (the library is loaded as a global by its own script tag). */
  /** @typedef {{destroy(): void, setSize(size: {width: number, height: number}): void}} Chart */
  /** @typedef {new (options: object, data: (number|null)[][], target: HTMLElement) => Chart} ChartConstructor */

  class ApiError extends Error {
    /** @param {number} status @param {unknown} body */
    constructor(status, body) {
      const problem = /** @type {Problem} */ (body && typeof body === 'object' ? body : {});
      super(problem.detail || problem.title || `HTTP ${status}`);
      this.status = status;
      this.code = typeof problem.code === 'string' ? problem.code : '';
      /** @type {{field: string}[]} */
      this.errors = Array.isArray(problem.errors) ? /** @type {{field: string}[]} */ (problem.errors) : [];
    }
    get notAvailable() {
      return this.status === 404 && this.code === 'ROUTE_NOT_FOUND';
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
   * @param {string} label @param {string|Node} content @param {string} [className]
   */
  function cell(label, content, className) {
    return el('td', { className, attrs: { 'data-label': label } }, [content]);
  }

  /** @param {HTMLElement} list @param {[string, string|Node][]} facts */
  function renderFacts(list, facts) {
    list.replaceChildren(...facts.flatMap(([term, value]) => [el('dt', { text: term }), el('dd', {}, [value])]));
  }

  const state = {
    /** @type {string|null} */ key: null,
    /** @type {'admin'|'auditor'} */ role: 'auditor',
    /** @type {WebhookConfig|null} */ config: null,
    /** @type {WebhookEndpoint[]|null} null when the server has no endpoints API */ endpoints: null,
    /** Page keys of the pages before the current one; the last entry is the current page's key. */
    /** @type {(string|null)[]} */ pageKeys: [null],
    /** @type {string|null} */ nextPageKey: null,
    /** @type {string|null} */ selectedId: null,
    /** @type {Chart|null} */ chart: null,
    watchTimer: 0,
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
    // The webhook configuration is readable by admins and auditors alone: it proves the key fits.
    const config = /** @type {WebhookConfig} */ (await api('GET', `${ORG}/webhook-config`, { key }));
    state.key = key;
    state.config = config;
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
    state.config = null;
    state.endpoints = null;
    state.selectedId = null;
    state.pageKeys = [null];
    state.nextPageKey = null;
    $('log-table').querySelector('tbody')?.replaceChildren();
    delete $('log-table').dataset.loaded;
    $('detail').hidden = true;
    window.clearTimeout(state.watchTimer);
    if (state.chart) state.chart.destroy();
    state.chart = null;
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
    renderConfig();
    void loadEndpoints();
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
    for (const view of ['config', 'log', 'stats']) $(`${view}-view`).hidden = view !== name;
    if (name === 'config') void reloadConfig();
    if (name === 'log') void loadLog();
    if (name === 'stats') void loadStats();
  }

  async function reloadConfig() {
    try {
      state.config = /** @type {WebhookConfig} */ (await api('GET', `${ORG}/webhook-config`));
      renderConfig();
      await loadEndpoints();
    } catch (error) {
      say(`Could not load the configuration: ${describe(error)}`, true);
    }
  }

  function renderConfig() {
    const config = state.config;
    if (!config) return;
    /** @type {[string, string][]} */
    const facts = [
      ['URL', config.url || 'not set'],
      ['Enabled', config.enabled ? 'yes' : 'no'],
      ['Types', config.webhookTypes.length ? config.webhookTypes.join(', ') : 'none'],
      ['Shared secret', config.hasSharedSecret ? 'set' : 'not set'],
      ['Updated (UTC)', shortTime(config.updatedAtUtc)],
    ];
    if ('previousSecretExpiresAtUtc' in config) {
      facts.push([
        'Previous secret valid until',
        config.previousSecretExpiresAtUtc ? shortTime(config.previousSecretExpiresAtUtc) : 'none',
      ]);
    }
    renderFacts($('config'), facts);
    const testType = /** @type {HTMLSelectElement} */ ($('test-type'));
    const types = config.webhookTypes.length ? config.webhookTypes : WEBHOOK_TYPES;
    testType.replaceChildren(...types.map((type) => el('option', { text: type, attrs: { value: type } })));
  }

  async function loadEndpoints() {
    const note = $('endpoints-note');
    try {
      const answer = /** @type {EndpointPage} */ (await api('GET', `${ORG}/webhook-endpoints${query({ pageSize: '100' })}`));
      state.endpoints = answer.endpoints;
      note.hidden = true;
    } catch (error) {
      if (!(error instanceof ApiError && error.notAvailable)) {
        say(`Could not load the endpoints: ${describe(error)}`, true);
        return;
      }
      // No endpoints API here: the webhook configuration is the one (default) endpoint.
      state.endpoints = null;
      note.textContent = 'Additional endpoints are not available on this server: the configuration above is the only endpoint.';
      note.hidden = false;
    }
    renderEndpoints();
  }

  function renderEndpoints() {
    const config = /** @type {Partial<WebhookConfig>} */ (state.config || {});
    /** @type {(Omit<Partial<WebhookEndpoint>, 'url'> & {url?: string|null})[]} */
    const rows = state.endpoints
      ? state.endpoints
      : [{ url: config.url, isDefault: true, enabled: config.enabled, webhookTypes: config.webhookTypes || [], disabledReason: null }];
    $('endpoints-table')
      .querySelector('tbody')
      ?.replaceChildren(
        ...rows.map((endpoint) =>
          el('tr', {}, [
            cell('URL', endpoint.url || 'not set', 'url'),
            cell('Default', endpoint.isDefault ? 'yes' : 'no'),
            cell('Enabled', endpoint.enabled ? 'yes' : 'no'),
            cell('Types', (endpoint.webhookTypes || []).join(', ') || 'none'),
            cell(
              'Note',
              [endpoint.description, endpoint.disabledReason ? `disabled: ${endpoint.disabledReason}` : ''].filter(Boolean).join(' · '),
            ),
          ]),
        ),
      );
    const select = /** @type {HTMLSelectElement} */ ($('filter-endpoint'));
    const current = select.value;
    select.replaceChildren(
      el('option', { text: 'any', attrs: { value: '' } }),
      ...(state.endpoints || []).map((endpoint) =>
        el('option', { text: endpoint.isDefault ? `${endpoint.url} (default)` : endpoint.url, attrs: { value: endpoint.id } }),
      ),
    );
    select.value = current;
    // Without the endpoints API the server takes no endpointId filter.
    select.disabled = state.endpoints === null;
  }

  // ---- delivery log --------------------------------------------------------------------------

  function filters() {
    const form = /** @type {HTMLFormElement} */ ($('filter-form'));
    const data = new FormData(form);
    const value = (/** @type {string} */ name) => formText(data, name);
    return {
      status: value('status'),
      webhookType: value('webhookType'),
      endpointId: state.endpoints ? value('endpointId') : '',
      since: fromLocalInput(value('since')),
      until: fromLocalInput(value('until')),
      pageSize: value('pageSize') || '50',
    };
  }

  async function loadLog() {
    const f = filters();
    const pageKey = state.pageKeys[state.pageKeys.length - 1];
    try {
      const answer = /** @type {WebhookPage} */ (
        await api('GET', `${ORG}/webhooks${query({ status: f.status, endpointId: f.endpointId, pageSize: f.pageSize, pageKey })}`)
      );
      state.nextPageKey = answer.nextPageKey;
      /** @type {WebhookSummary[]} */
      const shown = answer.webhooks.filter((w) => {
        if (f.webhookType && w.webhookType !== f.webhookType) return false;
        const created = new Date(w.createdAtUtc);
        if (f.since && created < f.since) return false;
        if (f.until && created > f.until) return false;
        return true;
      });
      renderLog(shown);
    } catch (error) {
      say(`Could not load the delivery log: ${describe(error)}`, true);
    }
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
        const row = el('tr', { attrs: { 'data-id': w.id } }, [
          cell('Created (UTC)', shortTime(w.createdAtUtc)),
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
      ['Type', webhook.webhookType],
      ['Resource', `${webhook.resourceType} ${webhook.resourceId}`],
      ['Action', webhook.action],
      ['Created (UTC)', shortTime(webhook.createdAtUtc)],
      ['Attempts', String(webhook.attemptCount)],
    ];
    if (webhook.endpointId) facts.push(['Endpoint', webhook.endpointId]);
    if (webhook.eventId) facts.push(['Event', webhook.eventId]);
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

  // ---- admin actions -------------------------------------------------------------------------

  /** @param {SubmitEvent} event */
  async function sendTest(event) {
    event.preventDefault();
    const webhookType = /** @type {HTMLSelectElement} */ ($('test-type')).value;
    try {
      const answer = /** @type {{id: string}} */ (
        await api('POST', `${ORG}/webhook-config/test`, { body: webhookType ? { webhookType } : {} })
      );
      say(`Test webhook ${answer.id} queued: see it in the delivery log.`);
    } catch (error) {
      say(`Test send refused: ${describe(error)}`, true);
    }
  }

  /** @param {SubmitEvent} event */
  async function rotateSecret(event) {
    event.preventDefault();
    const seconds = Number(/** @type {HTMLInputElement} */ ($('rotate-valid')).value);
    const result = $('rotate-result');
    result.hidden = true;
    try {
      const answer = /** @type {{sharedSecret?: string, previousSecretExpiresAtUtc: string|null}} */ (
        await api('POST', `${ORG}/webhook-config/rotate-secret`, { body: { previousSecretValidSeconds: seconds } })
      );
      /** @type {HTMLInputElement} */ ($('new-secret')).value = answer.sharedSecret || '';
      result.hidden = !answer.sharedSecret;
      say(`Secret rotated; the previous one stays valid until ${shortTime(answer.previousSecretExpiresAtUtc)} UTC.`);
      await reloadConfig();
    } catch (error) {
      if (error instanceof ApiError && error.notAvailable) say('Secret rotation is not available on this server.', true);
      else say(`Rotation refused: ${describe(error)}`, true);
    }
  }

  /** @param {SubmitEvent} event */
  async function replay(event) {
    event.preventDefault();
    const form = /** @type {HTMLFormElement} */ ($('replay-form'));
    const data = new FormData(form);
    const since = fromLocalInput(formText(data, 'since'));
    const until = fromLocalInput(formText(data, 'until'));
    if (!since) {
      say('Choose the start of the time range to replay.', true);
      return;
    }
    /** @type {Record<string, unknown>} */
    const body = { since: utc(since), status: formText(data, 'status') || 'failed' };
    if (until) body.until = utc(until);
    try {
      const answer = /** @type {{count: number}} */ (await api('POST', `${ORG}/webhooks/replay`, { body }));
      say(`${answer.count} webhook(s) queued for replay.`);
      void loadLog();
    } catch (error) {
      if (error instanceof ApiError && error.notAvailable) {
        const note = $('replay-note');
        note.textContent = 'Replay is not available on this server: redeliver webhooks one by one instead.';
        note.hidden = false;
        say('Replay is not available on this server.', true);
      } else say(`Replay refused: ${describe(error)}`, true);
    }
  }

  // ---- statistics ----------------------------------------------------------------------------

  async function loadStats() {
    const note = $('stats-note');
    const since = new Date(Date.now() - 24 * 3600 * 1000);
    try {
      const answer = /** @type {{buckets?: StatsBucket[]}} */ (
        await api('GET', `${ORG}/webhooks/stats${query({ since: utc(since), bucket: '1h' })}`)
      );
      note.hidden = true;
      renderChart(answer.buckets || []);
    } catch (error) {
      // A server without the statistics API reads `stats` as a webhook id (GET …/webhooks/{webhookId}).
      const statsUnknown =
        error instanceof ApiError &&
        (error.notAvailable || (error.code === 'INVALID_PATH_PARAMETER' && error.errors.some((e) => e.field === 'webhookId')));
      if (state.chart) state.chart.destroy();
      state.chart = null;
      $('chart').replaceChildren();
      $('stats-summary').textContent = '';
      note.textContent = statsUnknown
        ? 'Delivery statistics are not available on this server.'
        : `Could not load the statistics: ${describe(error)}`;
      note.hidden = false;
    }
  }

  /** @param {StatsBucket[]} buckets */
  function renderChart(buckets) {
    const uPlot = /** @type {{uPlot?: ChartConstructor}} */ (/** @type {unknown} */ (window)).uPlot;
    const container = $('chart');
    if (state.chart) state.chart.destroy();
    container.replaceChildren();
    const totals = buckets.reduce((sum, b) => ({ succeeded: sum.succeeded + b.succeeded, failed: sum.failed + b.failed }), {
      succeeded: 0,
      failed: 0,
    });
    $('stats-summary').textContent = `${totals.succeeded} succeeded and ${totals.failed} failed in ${buckets.length} hourly buckets.`;
    if (!uPlot || buckets.length === 0) return;
    const data = [
      buckets.map((b) => new Date(b.startUtc).getTime() / 1000),
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
        series: [
          {},
          { label: 'succeeded', stroke: '#2e7d32', fill: 'rgba(46,125,50,.15)', scale: 'count' },
          { label: 'failed', stroke: '#c62828', fill: 'rgba(198,40,40,.15)', scale: 'count' },
          { label: 'p50 ms', stroke: '#0b57d0', dash: [4, 4], scale: 'ms' },
          { label: 'p99 ms', stroke: '#7b1fa2', dash: [2, 2], scale: 'ms' },
        ],
        axes: [{}, { scale: 'count', label: 'webhooks' }, { scale: 'ms', side: 1, label: 'ms', grid: { show: false } }],
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

  // ---- wiring --------------------------------------------------------------------------------

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
  $('replay-form').addEventListener('submit', (event) => void replay(/** @type {SubmitEvent} */ (event)));

  const typeFilter = /** @type {HTMLSelectElement} */ ($('filter-type'));
  typeFilter.append(...WEBHOOK_TYPES.map((type) => el('option', { text: type, attrs: { value: type } })));

  // A reload of the tab keeps the session; a new tab or a closed one does not (sessionStorage).
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) {
    signIn(saved).catch((error) => signOut(`Please sign in again: ${describe(error)}`));
  } else {
    $('api-key').focus();
  }
})();
