import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Link, Tracer } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { formatTraceparent, parseTraceparent } from './traceparent';

/**
 * The service's one door to OpenTelemetry. Everything here is a no-op answering null until
 * startTracing (start-tracing.ts, called by the main entry point only when an OTLP endpoint is
 * configured) hands over the loaded API: with tracing off no OpenTelemetry module is ever
 * required, and a call costs one null check. Types only are imported from the API above.
 */
interface ActiveTracing {
  api: typeof OtelApi;
  tracer: Tracer;
  requestMiddleware: RequestHandler;
}

let active: ActiveTracing | null = null;

/** Called once by startTracing with what it loaded; undone by its shutdown. */
export function activateTracing(tracing: ActiveTracing | null): void {
  active = tracing;
}

export function tracingEnabled(): boolean {
  return active !== null;
}

/** The middleware making each API request's server span; null when tracing is off (then nothing is mounted). */
export function requestTracingMiddleware(): RequestHandler | null {
  return active?.requestMiddleware ?? null;
}

/**
 * The W3C traceparent of the span the caller runs in (the API request that is writing an
 * event), to be stored with what it causes; null when tracing is off or nothing is traced.
 */
export function currentTraceparent(): string | null {
  if (!active) return null;
  const position = active.api.trace.getSpanContext(active.api.context.active());
  return position && active.api.isSpanContextValid(position) ? formatTraceparent(position) : null;
}

/** What the work inside a span may say about itself. */
export interface SpanHandle {
  /** This span's own W3C traceparent, to send on an outgoing request it stands for. */
  readonly traceparent: string;
  setAttributes(attributes: Attributes): void;
  /** Marks the span failed (an attempt that did not succeed), without throwing. */
  fail(message: string): void;
}

export interface SpanOptions {
  kind?: 'internal' | 'client' | 'producer';
  /** Traceparents of the traces this work continues (stored with events); nulls and repeats are skipped. */
  links?: readonly (string | null)[];
  attributes?: Attributes;
}

/**
 * Runs `work` inside a new span of its own trace (background work has no caller to be a child
 * of: what caused it is expressed as links), ending it when `work` settles; a throw marks it
 * failed. With tracing off, `work(null)` and nothing else.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: SpanHandle | null) => Promise<T>): Promise<T> {
  if (!active) return work(null);
  const { api, tracer } = active;
  const kinds = { internal: api.SpanKind.INTERNAL, client: api.SpanKind.CLIENT, producer: api.SpanKind.PRODUCER };
  const span = tracer.startSpan(
    name,
    { kind: kinds[options.kind ?? 'internal'], links: linksTo(options.links ?? []), attributes: options.attributes },
    api.ROOT_CONTEXT,
  );
  const handle: SpanHandle = {
    traceparent: formatTraceparent(span.spanContext()),
    setAttributes: (attributes) => span.setAttributes(attributes),
    fail: (message) => span.setStatus({ code: api.SpanStatusCode.ERROR, message }),
  };
  try {
    return await api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, span), () => work(handle));
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

function linksTo(traceparents: readonly (string | null)[]): Link[] {
  const links = new Map<string, Link>();
  for (const value of traceparents) {
    if (value === null || links.has(value)) continue;
    const position = parseTraceparent(value);
    if (position) links.set(value, { context: { ...position, isRemote: true } });
  }
  return [...links.values()];
}
