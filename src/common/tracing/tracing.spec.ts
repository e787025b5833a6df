import * as api from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { RequestHandler } from 'express';
import { parseTraceparent } from './traceparent';
import { activateTracing, currentTraceparent, inSpan, requestTracingMiddleware, tracingEnabled } from './tracing';

const REQUEST = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const OTHER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('tracing facade', () => {
  describe('off (nothing started)', () => {
    it('does nothing but run the work', async () => {
      expect(tracingEnabled()).toBe(false);
      expect(currentTraceparent()).toBeNull();
      expect(requestTracingMiddleware()).toBeNull();
      await expect(inSpan('x', { links: [REQUEST] }, (span) => Promise.resolve(span))).resolves.toBeNull();
    });
  });

  describe('on', () => {
    const exporter = new InMemorySpanExporter();
    beforeAll(() => {
      const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      provider.register();
      activateTracing({ api, tracer: provider.getTracer('test'), requestMiddleware: (() => undefined) as RequestHandler });
    });
    afterAll(() => {
      activateTracing(null);
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    });
    beforeEach(() => exporter.reset());

    it('makes a root span linked once to each distinct trace, whose traceparent is the one the work sees', async () => {
      let seen: string | null = null;
      const handle = await inSpan('outbox.relay', { kind: 'producer', links: [REQUEST, null, REQUEST, OTHER, 'garbage'] }, (span) => {
        seen = currentTraceparent();
        return Promise.resolve(span);
      });
      const [span] = exporter.getFinishedSpans();
      expect(span.name).toBe('outbox.relay');
      expect(span.kind).toBe(api.SpanKind.PRODUCER);
      expect(span.parentSpanContext).toBeUndefined();
      expect(span.links.map((l) => l.context.traceId)).toEqual([parseTraceparent(REQUEST)!.traceId, parseTraceparent(OTHER)!.traceId]);
      expect(handle!.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      expect(seen).toBe(handle!.traceparent);
    });

    it('records what the work says, marks a failed attempt, and a throw fails the span and passes on', async () => {
      await inSpan('webhook.attempt', { kind: 'client', attributes: { 'webhook.attempt': 2 } }, (span) => {
        span!.setAttributes({ 'webhook.outcome': 'http_error' });
        span!.fail('receiver answered 500');
        return Promise.resolve();
      });
      await expect(inSpan('webhook.attempt', {}, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      const [failed, thrown] = exporter.getFinishedSpans();
      expect(failed.attributes).toEqual({ 'webhook.attempt': 2, 'webhook.outcome': 'http_error' });
      expect(failed.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'receiver answered 500' });
      expect(thrown.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'boom' });
      expect(thrown.events.map((e) => e.name)).toEqual(['exception']);
    });
  });
});
