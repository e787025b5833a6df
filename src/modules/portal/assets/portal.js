// @ts-check
/**
 * The webhook portal (docs/PORTAL.md "Portal"). Everything it shows comes from the public API with
 * the signed-in user's key, sent as a Bearer header; the key lives in sessionStorage only (no
 * cookie, no server session). Loaded as an external file so the strict CSP (script-src 'self')
 * stays on; it never writes HTML from data (textContent only), so API data cannot inject markup.
 */
import {
  $,
  api,
  ApiError,
  DAY_MS,
  describe,
  el,
  KEY_STORAGE,
  OPERATIONAL,
  ORG,
  query,
  session,
  state,
  toLocalInput,
  WEBHOOK_TYPES,
} from './core.js';
import { editEndpoint, loadRecentEvents, pickEvent, saveEndpoint, stopEditing, testFilter } from './endpoint-form.js';
import { mountEndpointForm } from './endpoint-form-view.js';
import { fetchEndpoints, hideSecret, loadEndpoints, renderEndpoints, rotateSecret, sendTest, toggleEndpoint } from './endpoints.js';
import { loadLog, redeliver, replay } from './deliveries.js';
import { loadStats } from './stats.js';
import { clearWallet, loadActivity, loadNfts, lookUpWallet } from './wallets.js';
/** @typedef {import('./core.js').ApiKeyPage} ApiKeyPage */

mountEndpointForm();

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
  stopEditing();
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
  // The first tab is where a signed-in admin lands.
  showView('endpoints');
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

// ---- wiring --------------------------------------------------------------------------------

/**
 * Checkboxes named webhookTypes, one per type.
 * @param {HTMLElement} container @param {(type: string) => boolean} checked @param {string} prefix
 */
function typeChoices(container, checked, prefix) {
  container.replaceChildren(
    ...WEBHOOK_TYPES.map((type) => {
      const input = el('input', { attrs: { type: 'checkbox', name: 'webhookTypes', value: type, id: `${prefix}-${type}` } });
      /** @type {HTMLInputElement} */ (input).defaultChecked = checked(type);
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
$('endpoint-edit').addEventListener('click', () => editEndpoint());
$('create-form').addEventListener('submit', (event) => void saveEndpoint(/** @type {SubmitEvent} */ (event)));
$('create-cancel').addEventListener('click', () => {
  stopEditing();
  const detail = $('endpoint-detail');
  (detail.hidden ? $('main') : detail).focus();
});
// The recent events are read when the box opens, so they include the latest webhooks.
$('filter-test').addEventListener('toggle', () => {
  if (/** @type {HTMLDetailsElement} */ ($('filter-test')).open) void loadRecentEvents();
});
$('filter-test-source').addEventListener('change', () => void pickEvent());
$('filter-test-run').addEventListener('click', () => void testFilter());
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
// A new endpoint gets every type about resources; notices about the organization's other
// endpoints are asked for, not sent unasked.
typeChoices($('create-types'), (type) => type !== OPERATIONAL, 'create-type');
typeChoices($('replay-types'), () => false, 'replay-type');

session.expired = signOut;

// A reload of the tab keeps the session; a new tab or a closed one does not (sessionStorage).
const saved = sessionStorage.getItem(KEY_STORAGE);
if (saved) {
  signIn(saved).catch((error) => signOut(`Please sign in again: ${describe(error)}`));
} else {
  $('api-key').focus();
}
