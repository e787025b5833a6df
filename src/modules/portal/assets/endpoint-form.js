// @ts-check
/**
 * The endpoint form of the Endpoints view, which adds an endpoint or changes one: where it is,
 * what it receives (types, contracts, a content filter, thin or full bodies) and how (rate,
 * headers, ordering, retry schedule); and the box that tries a filter on an event before it is saved.
 */
import { $, api, ApiError, describe, el, ENDPOINTS, formText, ORG, query, say, shortTime, state } from './core.js';
import { endpointById, endpointName, loadEndpoints, showSecret } from './endpoints.js';
/** @typedef {import('./core.js').FieldProblem} FieldProblem */
/** @typedef {import('./core.js').WebhookEndpoint} WebhookEndpoint */
/** @typedef {import('./core.js').WebhookDetail} WebhookDetail */
/** @typedef {import('./core.js').WebhookPage} WebhookPage */

/**
 * The endpoint as the form reads it, field by field, in the API's terms. A value the service
 * must judge (a rate or a delay that is no whole number) is kept as typed: its answer names it.
 * @typedef {{url: string, description: string|null, webhookTypes: string[], contractAddresses: string[]|null,
 *   rateLimitPerSecond: number|string|null, headers: Record<string, string>, ordering: string, payload: string,
 *   filter: unknown, retrySchedule: (number|string)[]|null, destination: unknown}} EndpointValues
 */

/** What a new endpoint gets for every field the form leaves empty. */
const DEFAULTS = {
  description: null,
  contractAddresses: null,
  rateLimitPerSecond: null,
  headers: {},
  ordering: 'none',
  payload: 'thin',
  filter: null,
  retrySchedule: null,
  destination: null,
};

/** The default endpoint is the webhook configuration: it has none of these (the API refuses them there). */
const NOT_ON_DEFAULT = ['description', 'contractAddresses', 'filter', 'destination'];

/** How many of the organization's latest webhooks the filter test offers as events. */
const RECENT_EVENTS = 20;

const form = () => /** @type {HTMLFormElement} */ ($('create-form'));

// ---- reading the form ----------------------------------------------------------------------

/** A whole number as a number; anything else as typed, for the service to name. @param {string} text */
function wholeOrTyped(text) {
  return /^\d+$/.test(text) ? Number(text) : text;
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

/**
 * JSON typed in a textarea: empty is null. Text that does not parse is a problem named after the
 * field, so it is shown where the JSON was typed and nothing is sent.
 * @param {string} text @param {string} field @param {FieldProblem[]} problems
 */
function parseJson(text, field, problems) {
  if (!text.trim()) return null;
  try {
    return /** @type {unknown} */ (JSON.parse(text));
  } catch (error) {
    problems.push({ field, message: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}` });
    return null;
  }
}

/** @param {FieldProblem[]} problems @returns {EndpointValues} */
function readForm(problems) {
  const data = new FormData(form());
  const text = (/** @type {string} */ name) => formText(data, name).trim();
  const list = (/** @type {string} */ name) =>
    text(name)
      .split(/[\s,]+/)
      .filter(Boolean);
  const contracts = list('contractAddresses');
  const delays = list('retrySchedule');
  return {
    url: text('url'),
    description: text('description') || null,
    webhookTypes: data.getAll('webhookTypes').map(String),
    contractAddresses: contracts.length ? contracts : null,
    rateLimitPerSecond: text('rateLimitPerSecond') ? wholeOrTyped(text('rateLimitPerSecond')) : null,
    headers: parseHeaderLines(formText(data, 'headers')),
    ordering: text('ordering') || 'none',
    payload: text('payload') || 'thin',
    filter: parseJson(formText(data, 'filter'), 'filter', problems),
    retrySchedule: delays.length ? delays.map(wholeOrTyped) : null,
    destination: parseJson(formText(data, 'destination'), 'destination', problems),
  };
}

/** The endpoint's current values, as the form shows them. @param {WebhookEndpoint} endpoint @returns {EndpointValues} */
function valuesOf(endpoint) {
  return {
    url: endpoint.url ?? '',
    description: endpoint.description,
    webhookTypes: endpoint.webhookTypes,
    contractAddresses: endpoint.filters.contractAddresses,
    rateLimitPerSecond: endpoint.rateLimitPerSecond ?? null,
    headers: endpoint.headers ?? {},
    ordering: endpoint.ordering,
    payload: endpoint.payload,
    filter: endpoint.filter,
    retrySchedule: endpoint.retrySchedule,
    destination: endpoint.destination ?? null,
  };
}

/** @param {EndpointValues} values */
function fillForm(values) {
  /** @type {Record<string, string>} */
  const fields = {
    url: values.url,
    description: values.description ?? '',
    contractAddresses: (values.contractAddresses ?? []).join(', '),
    rateLimitPerSecond: values.rateLimitPerSecond === null ? '' : String(values.rateLimitPerSecond),
    headers: Object.entries(values.headers)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n'),
    ordering: values.ordering,
    payload: values.payload,
    filter: values.filter === null ? '' : JSON.stringify(values.filter, null, 2),
    retrySchedule: (values.retrySchedule ?? []).join(', '),
    destination: values.destination === null ? '' : JSON.stringify(values.destination, null, 2),
  };
  for (const [name, value] of Object.entries(fields)) {
    const control = /** @type {HTMLInputElement|null} */ (form().elements.namedItem(name));
    if (control) control.value = value;
  }
  for (const box of /** @type {NodeListOf<HTMLInputElement>} */ (form().querySelectorAll('input[name="webhookTypes"]'))) {
    box.checked = values.webhookTypes.includes(box.value);
  }
}

/**
 * JSON with every object's keys sorted: the service may give a filter's or the headers' keys back
 * in another order, which is no change. @param {unknown} value @returns {string}
 */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The request body: each field whose value differs from `base`, in the API's shape (the
 * contracts go under `filters`). @param {EndpointValues} values @param {Partial<EndpointValues>} base @param {string[]} skip
 */
function changedFields(values, base, skip = []) {
  /** @type {Record<string, unknown>} */
  const body = {};
  for (const [name, value] of Object.entries(values)) {
    if (skip.includes(name) || canonical(value) === canonical(base[/** @type {keyof EndpointValues} */ (name)])) continue;
    if (name === 'contractAddresses') body.filters = { contractAddresses: value };
    else body[name] = value;
  }
  return body;
}

// ---- problems next to their fields ---------------------------------------------------------

/** Whether a problem's path falls under a form block's field. @param {string} path @param {string} field */
function under(path, field) {
  return path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);
}

/** @param {ParentNode} scope */
function clearProblems(scope) {
  for (const box of scope.querySelectorAll('.field-error')) box.remove();
  for (const control of scope.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
}

/**
 * Each problem next to the form block of its field (`data-field`), the path as the service or the
 * page named it; one that fits no block goes beside the form's buttons.
 * @param {FieldProblem[]} problems
 */
function showProblems(problems) {
  const blocks = /** @type {HTMLElement[]} */ (Array.from(form().querySelectorAll('[data-field]')));
  for (const problem of problems) {
    const block = blocks.find((b) => !b.closest('[hidden]') && under(problem.field, b.dataset.field ?? '')) ?? $('create-actions');
    let box = block.querySelector(':scope > .field-error');
    if (!box) {
      box = el('p', { className: 'error field-error' });
      block.append(box);
    }
    box.append(el('span', { text: `${problem.field}: ${problem.message}`, className: 'block' }));
    block.querySelector('input, select, textarea')?.setAttribute('aria-invalid', 'true');
  }
}

/** @param {unknown} error */
const problemsOf = (error) => (error instanceof ApiError ? error.errors : []);

// ---- adding and changing -------------------------------------------------------------------

/** The endpoint being changed, when the form is in that mode. */
function editedEndpoint() {
  const id = form().dataset.editing;
  return id ? endpointById(id) : undefined;
}

/** Shows the form for one mode: adding (no endpoint) or changing `endpoint`. @param {WebhookEndpoint} [endpoint] */
function setMode(endpoint) {
  const f = form();
  clearProblems(f);
  $('filter-test-result').textContent = '';
  // The test box belongs to the filter being typed: a new mode starts without it.
  /** @type {HTMLDetailsElement} */ ($('filter-test')).open = false;
  if (endpoint) f.dataset.editing = endpoint.id;
  else delete f.dataset.editing;
  for (const block of /** @type {NodeListOf<HTMLElement>} */ (f.querySelectorAll('[data-not-default]'))) {
    block.hidden = Boolean(endpoint?.isDefault);
  }
  $('create-title').textContent = endpoint ? `Change endpoint ${endpointName(endpoint)}` : 'Add an endpoint';
  $('create-submit').textContent = endpoint ? 'Save changes' : 'Add endpoint';
  $('create-cancel').hidden = !endpoint;
  $('create-note').hidden = Boolean(endpoint);
}

/** Opens the endpoint whose details are shown in the form, filled with what it has now. */
export function editEndpoint() {
  const endpoint = state.endpointId ? endpointById(state.endpointId) : undefined;
  if (!endpoint) return;
  form().reset();
  setMode(endpoint);
  fillForm(valuesOf(endpoint));
  $('create-form').scrollIntoView({ block: 'nearest' });
  $('create-url').focus();
}

/** Back to adding an endpoint, with an empty form. */
export function stopEditing() {
  form().reset();
  setMode();
}

/** @param {SubmitEvent} event */
export async function saveEndpoint(event) {
  event.preventDefault();
  const editing = editedEndpoint();
  /** @type {FieldProblem[]} */
  const problems = [];
  const values = readForm(problems);
  clearProblems(form());
  if (problems.length) {
    showProblems(problems);
    say(`Not sent: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, true);
    return;
  }
  try {
    if (editing) await update(editing, values);
    else await create(values);
  } catch (error) {
    showProblems(problemsOf(error));
    say(`${editing ? 'Changes not saved' : 'Endpoint not added'}: ${describe(error)}`, true);
  }
}

/** @param {EndpointValues} values */
async function create(values) {
  // An empty url is none: the endpoint publishes to its destination (the service names what is missing).
  const body = { url: values.url || null, webhookTypes: values.webhookTypes, ...changedFields(values, DEFAULTS, ['url', 'webhookTypes']) };
  const created = /** @type {WebhookEndpoint & {sharedSecret?: string}} */ (await api('POST', ENDPOINTS, { body }));
  stopEditing();
  say(`Endpoint ${endpointName(created)} added.`);
  state.endpointId = created.id;
  await loadEndpoints();
  if (created.sharedSecret) showSecret(created, created.sharedSecret);
}

/** Sends only what changed: a field left out keeps its value. @param {WebhookEndpoint} endpoint @param {EndpointValues} values */
async function update(endpoint, values) {
  const body = changedFields(values, valuesOf(endpoint), endpoint.isDefault ? NOT_ON_DEFAULT : []);
  if (body.url === '') body.url = null; // emptied to publish to a broker instead
  if (Object.keys(body).length === 0) {
    stopEditing();
    say(`Nothing to change on ${endpointName(endpoint)}.`);
    return;
  }
  const saved = /** @type {WebhookEndpoint} */ (await api('PATCH', `${ENDPOINTS}/${encodeURIComponent(endpoint.id)}`, { body }));
  stopEditing();
  say(`Endpoint ${endpointName(saved)} saved: ${Object.keys(body).join(', ')}.`);
  state.endpointId = saved.id;
  await loadEndpoints();
  $('endpoint-detail').focus();
}

// ---- the filter test -----------------------------------------------------------------------

/**
 * An event as filters see it, from a webhook of the log. A thin body has no `data`: delivery
 * reads the resource for filters, so the admin pastes it to try a filter on it.
 * @param {WebhookDetail} webhook
 */
function eventOf(webhook) {
  const body = /** @type {Record<string, unknown>} */ (webhook.payload && typeof webhook.payload === 'object' ? webhook.payload : {});
  return {
    webhookType: webhook.webhookType,
    resourceType: body.resourceType ?? webhook.resourceType,
    action: body.action ?? webhook.action,
    organizationId: body.organizationId ?? null,
    resourceId: body.resourceId ?? webhook.resourceId,
    changes: body.changes ?? null,
    data: body.data ?? null,
  };
}

/** Offers the organization's latest webhooks as events to try the filter on. */
export async function loadRecentEvents() {
  const select = /** @type {HTMLSelectElement} */ ($('filter-test-source'));
  try {
    const answer = /** @type {WebhookPage} */ (await api('GET', `${ORG}/webhooks${query({ pageSize: String(RECENT_EVENTS) })}`));
    select.replaceChildren(
      el('option', {
        text: answer.webhooks.length ? 'paste an event below' : 'no webhook yet: paste an event below',
        attrs: { value: '' },
      }),
      ...answer.webhooks.map((w) =>
        el('option', {
          text: `${shortTime(w.createdAtUtc)} · ${w.webhookType} · ${w.resourceType} ${w.action}`,
          attrs: { value: w.id },
        }),
      ),
    );
  } catch (error) {
    $('filter-test-result').textContent = `Could not read the delivery log: ${describe(error)}`;
  }
}

/** Puts the chosen webhook's event in the event box. */
export async function pickEvent() {
  const id = /** @type {HTMLSelectElement} */ ($('filter-test-source')).value;
  if (!id) return;
  try {
    const webhook = /** @type {WebhookDetail} */ (await api('GET', `${ORG}/webhooks/${encodeURIComponent(id)}`));
    /** @type {HTMLTextAreaElement} */ ($('filter-test-event')).value = JSON.stringify(eventOf(webhook), null, 2);
  } catch (error) {
    $('filter-test-result').textContent = `Could not read webhook ${id}: ${describe(error)}`;
  }
}

/** Asks the service whether the filter typed in the form matches the event in the box. */
export async function testFilter() {
  const result = $('filter-test-result');
  const button = /** @type {HTMLButtonElement} */ ($('filter-test-run'));
  clearProblems(form());
  result.classList.remove('bad');
  delete result.dataset.matches;
  /** @type {FieldProblem[]} */
  const problems = [];
  const filter = parseJson(/** @type {HTMLTextAreaElement} */ ($('create-filter')).value, 'filter', problems);
  const event = parseJson(/** @type {HTMLTextAreaElement} */ ($('filter-test-event')).value, 'event', problems);
  if (filter === null && !problems.some((p) => p.field === 'filter'))
    problems.push({ field: 'filter', message: 'is empty: write a filter to test' });
  if (event === null && !problems.some((p) => p.field === 'event'))
    problems.push({ field: 'event', message: 'is empty: pick a recent event or paste one' });
  if (problems.length) {
    showProblems(problems);
    result.textContent = 'Not tested: see the fields marked.';
    result.classList.add('bad');
    return;
  }
  button.disabled = true;
  result.textContent = '';
  try {
    const answer = /** @type {{matches: boolean}} */ (await api('POST', `${ENDPOINTS}/filter-test`, { body: { filter, event } }));
    result.textContent = answer.matches ? 'matches' : 'does not match';
    result.dataset.matches = String(answer.matches);
  } catch (error) {
    showProblems(problemsOf(error));
    result.textContent = `Not tested: ${describe(error)}`;
    result.classList.add('bad');
  } finally {
    button.disabled = false;
  }
}
