import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer, createOrganization } from './support/factories';
import { createIsolatedDatabase } from './support/isolated-database';
import { ReceivedWebhook, TestReceiver, waitUntil } from './support/receiver';
import { ServiceProcess } from './support/service-process';
import { OPERATOR_KEY, testEnv } from './support/test-app';
import { configureWebhooks } from './support/webhooks';

/** An OTLP/HTTP span as the JSON protocol carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: number | string } }[];
  links?: { traceId: string; spanId: string }[];
}

/** A collector standing in for the real one: accepts POST /v1/traces with JSON bodies and keeps the spans. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly serviceNames = new Set<string>();
  readonly contentTypes = new Set<string>();
  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        this.contentTypes.add(String(req.headers['content-type']));
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: { resource?: Pick<OtlpSpan, 'attributes'>; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
        };
        for (const resource of body.resourceSpans ?? []) {
          this.serviceNames.add(String(resource.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue));
          for (const scope of resource.scopeSpans ?? []) this.spans.push(...(scope.spans ?? []));
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function attribute(span: OtlpSpan, key: string): string | number | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (value?.stringValue !== undefined) return value.stringValue;
  return value?.intValue === undefined ? undefined : Number(value.intValue);
}

/**
 * Written at the exit of the process it is preloaded into (NODE_OPTIONS=--require): which
 * OpenTelemetry packages the process ever loaded.
 */
const LOADED_MODULES_REPORT = `
const { writeFileSync } = require('node:fs');
process.on('exit', () => {
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const match = /node_modules[\\\\/]@opentelemetry[\\\\/]([^\\\\/]+)/.exec(file);
    if (match) packages.add(match[1]);
  }
  writeFileSync(process.env.LOADED_MODULES_REPORT, JSON.stringify([...packages].sort()));
});
`;

const WALLETS_PATH = '/v1/wallets';
const SECRET = 'tracing-secret-0123456789';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

/**
 * Tracing, against the service as deployed: the OpenTelemetry SDK is process-wide, so the traced
 * service runs as an API process and a worker process of their own, started from the real entry
 * point with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP/HTTP receiver; a third process
 * runs without it, on a database of its own.
 */
describe('tracing (OpenTelemetry)', () => {
  let traced: { url: string; drop: () => Promise<void> };
  let untraced: { url: string; drop: () => Promise<void> };
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let plain: ServiceProcess | undefined;
  let second: ServiceProcess | undefined;
  let tracedEnv: Record<string, string | undefined>;
  let collector: OtlpReceiver;
  let receiver: TestReceiver;
  let reportDir: string;

  beforeAll(async () => {
    [traced, untraced, collector, receiver] = await Promise.all([
      createIsolatedDatabase('tracing'),
      createIsolatedDatabase('tracing_off'),
      new OtlpReceiver().start(),
      new TestReceiver().start(),
    ]);
    reportDir = mkdtempSync(join(tmpdir(), 'tracing-e2e-'));
    writeFileSync(join(reportDir, 'report.js'), LOADED_MODULES_REPORT);
    const run = Date.now().toString(36);
    const tracing = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Export within a moment rather than the default 5 s, so the test need not wait.
      OTEL_BSP_SCHEDULE_DELAY: '50',
    };
    const env = testEnv({ DATABASE_URL: traced.url, QUEUE_PREFIX: `trace${run}`, ...tracing });
    tracedEnv = env;
    [api, worker, plain] = await Promise.all([
      // The API process exports only when it stops: its request span shows the buffer is flushed on SIGTERM.
      ServiceProcess.start({ ...env, ROLE: 'api', OTEL_BSP_SCHEDULE_DELAY: '600000' }),
      ServiceProcess.start({ ...env, ROLE: 'worker' }),
      ServiceProcess.start({
        ...testEnv({ DATABASE_URL: untraced.url, QUEUE_PREFIX: `untraced${run}` }),
        ROLE: 'all',
        OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
        NODE_OPTIONS: `--require ${join(reportDir, 'report.js')}`,
        LOADED_MODULES_REPORT: join(reportDir, 'loaded.json'),
      }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await plain?.stop();
    await second?.stop();
    await receiver?.stop();
    await collector?.stop();
    await traced?.drop();
    await untraced?.drop();
    if (reportDir) rmSync(reportDir, { recursive: true, force: true });
  }, 60_000);

  it("exports the request's span continuing the caller's trace, a relay span and an attempt span linked to it, and the webhook carries the attempt's traceparent", async () => {
    const t = api!.client;
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.urlFor('/traced'), sharedSecret: SECRET, webhookTypes: ['custodialAccount'] });

    const created = await t
      .http()
      .post(WALLETS_PATH)
      .set(bearer(org.adminKey))
      .set('traceparent', `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`)
      .send({ name: 'traced wallet' })
      .expect(201);
    const walletId = created.body.id as string;

    await receiver.waitFor((all) => all.some((w) => w.body.resourceId === walletId), 30_000);
    const received = receiver.received.find((w) => w.body.resourceId === walletId)!;
    await waitUntil(
      () => collector.spans,
      (all) =>
        all.some((s) => s.name === 'outbox.relay' && (s.links ?? []).some((l) => l.traceId === TRACE_ID)) &&
        all.some((s) => s.name === 'webhook.attempt' && attribute(s, 'webhook.id') === received.body.id),
      30_000,
    );
    expect(collector.spans.some((s) => s.traceId === TRACE_ID)).toBe(false);

    // A graceful stop of the API process exports the spans it still held.
    api!.signal('SIGTERM');
    expect(await api!.exit).toBe(0);
    const spans = collector.spans;
    expect([...collector.serviceNames]).toEqual(['nft-wallet-service']);

    // The request's server span continues the caller's trace, as a child of the caller's span.
    const request = spans.find((s) => s.name === 'POST /v1/wallets' && s.traceId === TRACE_ID)!;
    expect(request).toMatchObject({ parentSpanId: CALLER_SPAN_ID, kind: 2 });
    expect(attribute(request, 'http.request.method')).toBe('POST');
    expect(attribute(request, 'http.route')).toBe('/v1/wallets');
    expect(attribute(request, 'http.response.status_code')).toBe(201);

    // The relay's span is a trace of its own, linked to the request's span.
    const relay = spans.find((s) => s.name === 'outbox.relay' && (s.links ?? []).some((l) => l.traceId === TRACE_ID))!;
    expect(relay.traceId).not.toBe(TRACE_ID);
    expect(relay.links).toContainEqual(expect.objectContaining({ traceId: TRACE_ID, spanId: request.spanId }));

    // The attempt's span is linked to the request's span and describes the attempt.
    const attempt = spans.find((s) => s.name === 'webhook.attempt' && attribute(s, 'webhook.id') === received.body.id)!;
    expect(attempt.kind).toBe(3);
    expect(attempt.links).toEqual([expect.objectContaining({ traceId: TRACE_ID, spanId: request.spanId })]);
    expect(attribute(attempt, 'webhook.endpoint_id')).toBe(org.id);
    expect(attribute(attempt, 'webhook.event_id')).toBe(received.headers['x-service-webhook-event-id']);
    expect(attribute(attempt, 'webhook.attempt')).toBe(1);
    expect(attribute(attempt, 'webhook.outcome')).toBe('success');
    expect(attribute(attempt, 'http.response.status_code')).toBe(200);

    // The webhook carries the attempt's own traceparent: a traced receiver continues that trace.
    expect(received.headers.traceparent).toBe(`00-${attempt.traceId}-${attempt.spanId}-01`);
    expect([...collector.contentTypes]).toEqual(['application/json']);
  });

  it('without OTEL_EXPORTER_OTLP_ENDPOINT sends no traceparent on webhooks and never loads the OpenTelemetry SDK', async () => {
    const t = plain!.client;
    const org = await createOrganization(t);
    await configureWebhooks(t, org, { url: receiver.urlFor('/untraced'), sharedSecret: SECRET, webhookTypes: ['custodialAccount'] });
    const created = await t
      .http()
      .post(WALLETS_PATH)
      .set(bearer(org.adminKey))
      .set('traceparent', `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`)
      .send({ name: 'untraced wallet' })
      .expect(201);
    await receiver.waitFor((all) => all.some((w) => w.body.resourceId === created.body.id), 30_000);
    const received: ReceivedWebhook = receiver.received.find((w) => w.body.resourceId === created.body.id)!;
    expect(received.path).toBe('/untraced');
    expect(received.headers).not.toHaveProperty('traceparent');

    // A clean stop writes the report of what the process loaded. The API package alone may
    // appear: prom-client requires it for its own metrics, whether or not tracing is on.
    plain!.signal('SIGTERM');
    expect(await plain!.exit).toBe(0);
    const loaded = JSON.parse(readFileSync(join(reportDir, 'loaded.json'), 'utf8')) as string[];
    expect(loaded.filter((name) => name !== 'api')).toEqual([]);
  });
  it('redacts key-shaped values and the operator key in the URL attributes of exported spans, as in the logs', async () => {
    // A second traced API process (the first one was stopped above), exporting within a moment.
    second = await ServiceProcess.start({ ...tracedEnv, ROLE: 'api' });
    const t = second.client;
    const keyShaped = `nftw_${'Kq7w2Zx9'.repeat(5)}a_-`;
    expect(keyShaped).toHaveLength(48);
    const traceId = 'aa'.repeat(16);
    const paths = [
      `/v1/wallets/${keyShaped}`,
      `/v1/tokens/${OPERATOR_KEY}?pageSize=1`,
      `/v1/wallets/key%3D${encodeURIComponent(keyShaped)}?anything=${keyShaped}`,
    ];
    for (const [i, path] of paths.entries()) {
      await t
        .http()
        .get(path)
        .set('traceparent', `00-${traceId}-${String(i + 1).padStart(16, '0')}-01`);
    }
    const spans = await waitUntil(
      () => collector.spans.filter((s) => s.traceId === traceId),
      (found) => found.length >= paths.length,
      30_000,
    );
    expect(spans.map((s) => attribute(s, 'url.path')).sort()).toEqual(
      ['/v1/wallets/[redacted]', '/v1/tokens/[redacted]', '/v1/wallets/[redacted]'].sort(),
    );
    const exported = JSON.stringify(spans);
    for (const secret of [keyShaped, OPERATOR_KEY, encodeURIComponent(keyShaped), keyShaped.slice(5)]) {
      expect(exported).not.toContain(secret);
    }
  });
});
