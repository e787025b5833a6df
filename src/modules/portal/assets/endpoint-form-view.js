// @ts-check
/**
 * The markup of the form that adds or edits an endpoint, with its filter test box. It lives here
 * rather than in index.html so the page stays short enough to read; it is constant text written
 * once at start-up, never data (everything from the API is written with textContent).
 */
const MARKUP = `
<h3 id="create-title">Add an endpoint</h3>
<form id="create-form" class="filters">
  <div class="wide" data-field="url">
    <label for="create-url">URL</label>
    <input id="create-url" name="url" type="url" spellcheck="false" placeholder="https://example.com/webhooks" />
  </div>
  <div class="wide" data-field="destination" data-not-default>
    <label for="create-destination">Or a message broker instead of a URL (optional, JSON)</label>
    <textarea
      id="create-destination"
      name="destination"
      rows="3"
      spellcheck="false"
      class="mono"
      aria-describedby="create-destination-note"
      placeholder='{"type": "nats", "url": "nats://user:password@nats.example.com:4222", "subject": "webhooks.{webhookType}", "stream": "WEBHOOKS"}'
    ></textarea>
    <span id="create-destination-note" class="note"
      >RabbitMQ <code>{type: "rabbitmq", url: "amqp(s)://…", exchange, routingKey}</code>, NATS JetStream
      <code>{type: "nats", url, subject, stream}</code> or MQTT 5 <code>{type: "mqtt", url: "mqtt(s)://…", topic, qos: 1}</code>;
      leave the URL empty. The password shows as <code>***</code>, which keeps the stored one when saved.</span
    >
  </div>
  <div class="wide" data-field="description" data-not-default>
    <label for="create-description">Description (optional)</label>
    <input id="create-description" name="description" type="text" maxlength="500" />
  </div>
  <fieldset class="wide choices" data-field="webhookTypes">
    <legend>Webhook types</legend>
    <div id="create-types" class="row"></div>
    <span class="note"
      >operational: when another endpoint of the organization is switched off or on, starts failing or recovers, and when a
      webhook failed for good.</span
    >
  </fieldset>
  <div class="wide" data-field="filters" data-not-default>
    <label for="create-contracts">Only these contracts, for nft and transaction webhooks (optional)</label>
    <input
      id="create-contracts"
      name="contractAddresses"
      type="text"
      spellcheck="false"
      aria-describedby="create-contracts-note"
      placeholder="0x…, 0x…"
    />
    <span id="create-contracts-note" class="note">Addresses separated by commas or spaces; empty: every contract.</span>
  </div>
  <div class="wide" data-field="filter" data-not-default>
    <label for="create-filter">Content filter (optional, JSON)</label>
    <textarea
      id="create-filter"
      name="filter"
      rows="4"
      spellcheck="false"
      class="mono"
      aria-describedby="create-filter-note"
      placeholder='{"resourceType": "Wallet", "data": {"name": {"$startsWith": "Vault"}}}'
    ></textarea>
    <span id="create-filter-note" class="note"
      >Only events that match become webhooks here: keys
      <code>webhookType resourceType action organizationId resourceId changes data</code> (the resource as its GET answers),
      operators <code>$eq $neq $gt $gte $lt $lte $in $nin $exist $startsWith $or $and $not</code>. Empty: none.</span
    >
  </div>
  <details id="filter-test" class="wide panel-box" data-not-default>
    <summary>Test filter</summary>
    <p class="note">
      Tries the filter above on an event, judged as delivery judges it; nothing is saved. A thin body has no <code>data</code>:
      paste the resource there to try a filter on it.
    </p>
    <div class="filters">
      <div class="wide">
        <label for="filter-test-source">A recent event from the delivery log</label>
        <select id="filter-test-source">
          <option value="">paste an event below</option>
        </select>
      </div>
      <div class="wide" data-field="event">
        <label for="filter-test-event">Event (JSON)</label>
        <textarea id="filter-test-event" rows="8" spellcheck="false" class="mono"></textarea>
      </div>
      <div class="row wide">
        <button type="button" id="filter-test-run">Test</button>
        <span id="filter-test-result" class="result" role="status" aria-live="polite"></span>
      </div>
    </div>
  </details>
  <div data-field="payload">
    <label for="create-payload">Body</label>
    <select id="create-payload" name="payload" aria-describedby="create-payload-note">
      <option value="thin" selected>thin: the event's envelope</option>
      <option value="full">full: the envelope and data</option>
    </select>
    <span id="create-payload-note" class="note">full adds <code>data</code>, the resource as its GET answers.</span>
  </div>
  <div data-field="retrySchedule">
    <label for="create-retry">Retry schedule (optional)</label>
    <input id="create-retry" name="retrySchedule" aria-describedby="create-retry-note" placeholder="10, 60, 600" />
    <span id="create-retry-note" class="note">Seconds before each retry, 1 to 20 of them; empty: the service's schedule.</span>
  </div>
  <div data-field="rateLimitPerSecond">
    <label for="create-rate">Attempts per second at most (optional)</label>
    <input
      id="create-rate"
      name="rateLimitPerSecond"
      type="number"
      min="1"
      max="10000"
      step="1"
      inputmode="numeric"
      aria-describedby="create-rate-note"
    />
    <span id="create-rate-note" class="note">1 to 10,000; empty: unlimited.</span>
  </div>
  <div class="wide" data-field="headers">
    <label for="create-headers">Custom headers (optional)</label>
    <textarea
      id="create-headers"
      name="headers"
      rows="3"
      spellcheck="false"
      aria-describedby="create-headers-note"
      placeholder="X-Gateway-Token: gw_4f1c9a"
    ></textarea>
    <span id="create-headers-note" class="note">One <code>Name: value</code> per line, up to 10; sent on every webhook.</span>
  </div>
  <div class="wide" data-field="ordering">
    <label for="create-ordering">Ordering</label>
    <select id="create-ordering" name="ordering" aria-describedby="create-ordering-note">
      <option value="none" selected>none: each webhook as soon as it can be sent</option>
      <option value="resource">resource: one at a time per resource, in event order</option>
    </select>
    <span id="create-ordering-note" class="note"
      >With resource, each webhook carries x-service-webhook-sequence (1, 2, 3… per resource).</span
    >
  </div>
  <div id="create-actions" class="actions wide row">
    <button type="submit" id="create-submit">Add endpoint</button>
    <button type="button" id="create-cancel" class="secondary" hidden>Cancel</button>
  </div>
</form>
<p id="create-note" class="note">The service generates the new endpoint's shared secret and shows it once.</p>
`;

/** Puts the form into its panel; called before the page binds its controls. */
export function mountEndpointForm() {
  const panel = document.getElementById('create-panel');
  if (!panel) throw new Error('the page has no #create-panel');
  panel.innerHTML = MARKUP;
}
