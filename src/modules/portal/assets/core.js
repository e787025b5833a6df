// @ts-check
/**
 * Shared by every view of the portal: the API call with the signed-in key, DOM helpers that
 * write text only (never HTML from data), the status line and the page state.
 */

export const KEY_STORAGE = 'portal.apiKey';
export const ORG = '/api/organization/v1/current-organization';
export const ENDPOINTS = `${ORG}/webhook-endpoints`;
export const WEBHOOK_TYPES = ['payment', 'transaction', 'nft', 'kyc', 'document', 'custodialAccount', 'operational'];
/** The service's notices about the organization's endpoints and webhooks, rather than about a resource. */
export const OPERATIONAL = 'operational';
/** How long the detail view watches for the attempt a redelivery makes. */
export const REDELIVER_WATCH_MS = 30000;
export const DAY_MS = 24 * 3600 * 1000;

// The answers this page reads (the OpenAPI document, /docs-json), with the fields it uses.
/** @typedef {{detail?: string, title?: string, code?: unknown, errors?: unknown}} Problem */
/** One field a request got wrong, named by its path in the body (`filter.data.name.$foo`). */
/** @typedef {{field: string, message: string}} FieldProblem */
/** @typedef {{id: string, isDefault: boolean, url: string|null, description: string|null, enabled: boolean, webhookTypes: string[], filters: {contractAddresses: string[]|null}, ordering: string, payload: string, filter: Record<string, unknown>|null, retrySchedule: number[]|null, hasSharedSecret: boolean, previousSecretExpiresAtUtc: string|null, headers?: Record<string, string>, rateLimitPerSecond?: number|null, publicKey?: string|null, previousPublicKey?: string|null, auth?: {type: string, tokenUrl: string, clientId: string, scope: string|null, hasClientSecret: boolean}|null, tls?: {hasClientKey: boolean, subject: string, notAfterUtc: string}|null, destination?: ({type: string, url: string} & Record<string, unknown>)|null, disabledReason: string|null, createdAtUtc: string, updatedAtUtc: string}} WebhookEndpoint */
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

export class ApiError extends Error {
  /** @param {number} status @param {unknown} body */
  constructor(status, body) {
    const problem = /** @type {Problem} */ (body && typeof body === 'object' ? body : {});
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = typeof problem.code === 'string' ? problem.code : '';
    /** The fields the request got wrong, each named by its path, to show next to what was typed there. */
    this.errors = Array.isArray(problem.errors) ? problem.errors.filter(isFieldProblem) : [];
  }
}

/** @param {unknown} entry @returns {entry is FieldProblem} */
function isFieldProblem(entry) {
  const fields = /** @type {{field?: unknown, message?: unknown}} */ (entry && typeof entry === 'object' ? entry : {});
  return typeof fields.field === 'string' && typeof fields.message === 'string';
}

/** @template {HTMLElement} T @param {string} id @returns {T} */
export function $(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`missing element #${id}`);
  return /** @type {T} */ (element);
}

/**
 * @param {string} tag
 * @param {{text?: string, className?: string, attrs?: Record<string, string>}} [options]
 * @param {(Node|string)[]} [children]
 */
export function el(tag, options = {}, children = []) {
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
export function cell(label, content, className) {
  return el('td', { className, attrs: { 'data-label': label } }, Array.isArray(content) ? content : [content]);
}

/** @param {HTMLElement} list @param {[string, string|Node][]} facts */
export function renderFacts(list, facts) {
  list.replaceChildren(...facts.flatMap(([term, value]) => [el('dt', { text: term }), el('dd', {}, [value])]));
}

/**
 * Loads of one region: the region is `aria-busy` while its latest load runs, and an answer that
 * a newer load overtook is dropped, so a slow old answer never overwrites a newer one.
 * @param {string} id
 */
export function loads(id) {
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
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** NFTs per page of the grid, and activity entries per page. */
export const NFT_PAGE = 48;
export const ACTIVITY_PAGE = 20;

/** "1 webhook", "3 webhooks". @param {number} count @param {string} noun */
export function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

export const state = {
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

/** What the page does when the key stops working mid-session (set by the page's entry script). */
export const session = {
  /** @type {(message: string) => void} */
  expired: () => undefined,
};

// ---- API -----------------------------------------------------------------------------------

/**
 * @param {string} method @param {string} path
 * The parsed JSON answer (null for an empty one); callers state the shape they read.
 * @param {{body?: unknown, key?: string|null}} [options]
 * @returns {Promise<unknown>}
 */
export async function api(method, path, options = {}) {
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
      session.expired(`Signed out: ${new ApiError(response.status, body).message}`);
    }
    throw new ApiError(response.status, body);
  }
  return body;
}

/** @param {Record<string, string|undefined|null>} params */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** The contract's timestamp form (numeric offset, never `Z`). @param {Date} date */
export function utc(date) {
  return date.toISOString().replace('Z', '+00:00');
}

/** A text field of a form ('' when absent; the forms here have no file inputs). @param {FormData} data @param {string} name */
export function formText(data, name) {
  const value = data.get(name);
  return typeof value === 'string' ? value : '';
}

/** A datetime-local value (the user's local time) as a Date, or null. @param {string} value */
export function fromLocalInput(value) {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A Date as a datetime-local value in the user's time, to the minute. @param {Date} date */
export function toLocalInput(date) {
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60000);
  return local.toISOString().slice(0, 16);
}

/** @param {string|null|undefined} value */
export function shortTime(value) {
  if (!value) return '—';
  return value
    .replace('T', ' ')
    .replace(/(\.\d{3})\d*/, '$1')
    .replace('+00:00', '');
}

// ---- status line ---------------------------------------------------------------------------

/** @param {string} message @param {boolean} [bad] */
export function say(message, bad = false) {
  const status = $('status');
  status.textContent = message;
  status.classList.toggle('bad', bad);
}

/** @param {unknown} error */
export function describe(error) {
  if (error instanceof ApiError) return `${error.message}${error.code ? ` (${error.code})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
