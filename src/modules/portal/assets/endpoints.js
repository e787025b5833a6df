// @ts-check
/**
 * The Endpoints view: the organization's webhook endpoints, their details, secrets, test
 * sends and enabling (endpoint-form.js adds and changes them).
 */
import { $, api, cell, describe, el, ENDPOINTS, loads, plural, query, renderFacts, say, shortTime, state, WEBHOOK_TYPES } from './core.js';
/** @typedef {import('./core.js').EndpointPage} EndpointPage */
/** @typedef {import('./core.js').WebhookEndpoint} WebhookEndpoint */

const endpointLoads = loads('endpoints-table');

// ---- endpoints -----------------------------------------------------------------------------

/** Every endpoint, following nextPageKey (an organization has at most 20). @param {string|null} key */
export async function fetchEndpoints(key) {
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

export async function loadEndpoints() {
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
export function endpointById(id) {
  return state.endpoints.find((endpoint) => endpoint.id === id);
}

/** How an endpoint is named in lists and selects: its description, else its url. @param {WebhookEndpoint} endpoint */
export function endpointName(endpoint) {
  const name = endpoint.description || endpoint.url || endpoint.destination?.url || 'no url yet';
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

/** @param {WebhookEndpoint} endpoint */
function filtersText(endpoint) {
  const contracts = endpoint.filters.contractAddresses;
  const content = endpoint.filter ? 'a content filter' : '';
  if (!contracts) return content || 'none';
  const shown = contracts.slice(0, 3).join(', ');
  const text = `nft and transaction of ${plural(contracts.length, 'contract')}: ${shown}${contracts.length > 3 ? `, and ${contracts.length - 3} more` : ''}`;
  return content ? `${text}; ${content}` : text;
}

/** @param {WebhookEndpoint} endpoint */
function payloadText(endpoint) {
  return endpoint.payload === 'full' ? 'full: the envelope and data, the resource as its GET answers' : 'thin: the envelope only';
}

/** @param {WebhookEndpoint} endpoint */
function retryText(endpoint) {
  return endpoint.retrySchedule ? `${endpoint.retrySchedule.join(', ')} seconds` : "the service's schedule";
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

/**
 * The message broker the endpoint publishes to, its fields as the service shows them (the url's
 * password as ***). @param {WebhookEndpoint} endpoint
 */
function destinationText(endpoint) {
  const destination = endpoint.destination;
  if (!destination) return 'none: HTTP';
  const fields = Object.entries(destination).filter(([name]) => name !== 'type' && name !== 'url');
  return `${destination.type} at ${destination.url}; ${fields.map(([name, value]) => `${name} ${JSON.stringify(value)}`).join(', ')}`;
}

/** The client certificate of mutual TLS, with when it must be renewed. @param {WebhookEndpoint} endpoint */
function tlsText(endpoint) {
  if (!endpoint.tls) return 'none';
  return `${endpoint.tls.subject}, expires ${shortTime(endpoint.tls.notAfterUtc)} UTC`;
}

export function renderEndpoints() {
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
        const where = endpoint.url || (endpoint.destination ? `${endpoint.destination.type}: ${endpoint.destination.url}` : 'no url yet');
        const name = [el('span', { text: where, className: 'mono' })];
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
    ['URL', endpoint.url || (endpoint.destination ? 'none: publishes to a broker' : 'not set')],
    ['Destination', destinationText(endpoint)],
    ['Default', endpoint.isDefault ? 'yes: the webhook configuration' : 'no'],
    ['Description', endpoint.description || '—'],
    ['Status', el('span', { text: status.text, className: status.className })],
    ['Types', endpoint.webhookTypes.join(', ') || 'none'],
    ['Contracts', endpoint.filters.contractAddresses ? endpoint.filters.contractAddresses.join(', ') : 'every contract'],
    ['Body', payloadText(endpoint)],
    ['Content filter', endpoint.filter ? el('code', { text: JSON.stringify(endpoint.filter), className: 'mono' }) : 'none'],
    ['Retry schedule', retryText(endpoint)],
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
export function showSecret(endpoint, secret) {
  const box = $('secret-box');
  const input = /** @type {HTMLTextAreaElement} */ ($('new-secret'));
  $('secret-endpoint').textContent = endpoint ? endpoint.url || endpointName(endpoint) : '';
  input.value = secret;
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
  input.focus();
  input.select();
}

export function hideSecret() {
  /** @type {HTMLTextAreaElement} */ ($('new-secret')).value = '';
  $('secret-endpoint').textContent = '';
  $('secret-box').hidden = true;
}

/** @param {SubmitEvent} event */
export async function sendTest(event) {
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
export async function rotateSecret(event) {
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

export async function toggleEndpoint() {
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
