import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { NextFunction, Request, Response } from 'express';
import type { TracingConfig } from '../../config/tracing-config';
import { redactUrlAttributes } from './redact-span';
import { activateTracing } from './tracing';

/** Probes and scrapes are not API requests; a span for each would bury the requests that matter. */
const UNTRACED_PATHS = /^\/(health(\/|$)|metrics$)/;
/** A relay batch links every event it moves (up to 500); the SDK's default keeps only 128 links. */
const LINK_LIMIT = 1000;

export interface RunningTracing {
  /** Exports the spans still buffered, then stops; call after the app closed. */
  shutdown(): Promise<void>;
}

/**
 * Loads the OpenTelemetry SDK, registers it for this process (W3C trace context propagation,
 * AsyncLocalStorage context) and exports spans in batches over OTLP/HTTP with JSON bodies.
 * Called by the main entry point before the application is created, and only when tracing is
 * configured: the modules are imported here, on demand, so a process without tracing never
 * loads them.
 */
export async function startTracing(config: TracingConfig, role: string, operatorKey: string | null): Promise<RunningTracing> {
  const api = await import('@opentelemetry/api');
  const { NodeTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes, defaultResource } = await import('@opentelemetry/resources');
  const semconv = await import('@opentelemetry/semantic-conventions');

  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: config.serviceName, 'service.instance.role': role }),
    ),
    spanLimits: { linkCountLimit: LINK_LIMIT },
    // Batch delay and sizes follow the standard OTEL_BSP_* variables when they are set.
    // URLs in spans are redacted like the logs' before anything is exported.
    spanProcessors: [new RedactingSpanProcessor(new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl })), operatorKey)],
  });
  provider.register();
  const tracer = provider.getTracer(config.serviceName);

  const requestMiddleware = (req: Request, res: Response, next: NextFunction): void => {
    if (UNTRACED_PATHS.test(req.path)) return next();
    // Continues the caller's trace when it sent a valid traceparent; a new trace otherwise.
    const parent = api.propagation.extract(api.ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      req.method,
      {
        kind: api.SpanKind.SERVER,
        attributes: { [semconv.ATTR_HTTP_REQUEST_METHOD]: req.method, [semconv.ATTR_URL_PATH]: req.path },
      },
      parent,
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      // The route template, not the path: ids in paths would make every request a name of its own.
      const route = (req.route as { path?: unknown } | undefined)?.path;
      if (typeof route === 'string') {
        const template = `${req.baseUrl}${route}`;
        span.updateName(`${req.method} ${template}`);
        span.setAttribute(semconv.ATTR_HTTP_ROUTE, template);
      }
      span.setAttribute(semconv.ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute('http.request.aborted', true);
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    const context = api.trace.setSpan(parent, span);
    // The body arrives in events of the connection, outside this call: bind them to the span's
    // context so that everything the request does (the events it writes) sees it.
    api.context.bind(context, req);
    api.context.bind(context, res);
    api.context.with(context, next);
  };

  activateTracing({ api, tracer, requestMiddleware });
  return {
    shutdown: async () => {
      activateTracing(null);
      await provider.shutdown();
    },
  };
}

/**
 * Hands every ended span on to `next` (the exporting processor) with the URLs in its attributes
 * redacted (redactUrlAttributes). A span with something to hide is handed on as a view of it with
 * the redacted attributes, so the SDK's own span is never changed.
 */
class RedactingSpanProcessor implements SpanProcessor {
  constructor(
    private readonly next: SpanProcessor,
    private readonly operatorKey: string | null,
  ) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    const attributes = redactUrlAttributes(span.attributes, this.operatorKey);
    this.next.onEnd(
      attributes === null ? span : (Object.create(span, { attributes: { value: attributes, enumerable: true } }) as ReadableSpan),
    );
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}
