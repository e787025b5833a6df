// @ts-check
/**
 * The Delivery log view: webhooks by filter and page, one webhook's attempts, redelivery and
 * replay of a time range.
 */
import {
  $,
  api,
  cell,
  describe,
  el,
  formText,
  fromLocalInput,
  loads,
  OPERATIONAL,
  ORG,
  plural,
  query,
  REDELIVER_WATCH_MS,
  renderFacts,
  say,
  shortTime,
  state,
  utc,
} from './core.js';
import { endpointById, endpointName, loadEndpoints } from './endpoints.js';
/** @typedef {import('./core.js').Attempt} Attempt */
/** @typedef {import('./core.js').WebhookDetail} WebhookDetail */
/** @typedef {import('./core.js').WebhookPage} WebhookPage */
/** @typedef {import('./core.js').WebhookSummary} WebhookSummary */

const logLoads = loads('log-table');

// ---- delivery log --------------------------------------------------------------------------

export function filters() {
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

export async function loadLog() {
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

/**
 * What an entry reports on. An operational one is about an endpoint or a webhook of the
 * organization, not a resource: it names that endpoint, as the log names the one it went to.
 * @param {WebhookSummary} w
 */
function subjectOf(w) {
  if (w.webhookType !== OPERATIONAL) return `${w.resourceType} ${w.action}`;
  return `${w.action}: ${w.resourceType === 'WebhookEndpoint' ? `endpoint ${endpointOf(w.resourceId)}` : `webhook ${w.resourceId}`}`;
}

/** @param {WebhookSummary} w */
function typeOf(w) {
  return w.webhookType === OPERATIONAL ? el('span', { text: w.webhookType, className: 'badge operational' }) : w.webhookType;
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
        cell('Type', typeOf(w)),
        cell('Resource', subjectOf(w)),
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
    ['Type', typeOf(webhook)],
    ['Resource', `${webhook.resourceType} ${webhook.resourceId}`],
    ['Action', webhook.action],
    ['Created (UTC)', shortTime(webhook.createdAtUtc)],
    ['Attempts', String(webhook.attemptCount)],
    ['Event', webhook.eventId],
  ];
  if (webhook.webhookType === OPERATIONAL) facts.splice(3, 0, ['About', aboutText(webhook)]);
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

/**
 * The endpoint an operational webhook is about: the one switched or failing, or the one a
 * webhook failed for good at (its body's `changes.endpointId`). @param {WebhookDetail} webhook
 */
function aboutText(webhook) {
  if (webhook.resourceType === 'WebhookEndpoint') return `endpoint ${endpointOf(webhook.resourceId)}`;
  const body = /** @type {{changes?: {endpointId?: unknown}|null}} */ (webhook.payload ?? {});
  const endpointId = body.changes?.endpointId;
  return typeof endpointId === 'string'
    ? `webhook ${webhook.resourceId} to endpoint ${endpointOf(endpointId)}`
    : `webhook ${webhook.resourceId}`;
}

/** After a redelivery, refresh the detail until the new attempt appears (or give up quietly). */
export async function redeliver() {
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
export async function replay(event) {
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
