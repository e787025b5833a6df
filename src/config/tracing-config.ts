import { Parsed, rule, text } from './variables';

/** Where and as what the process exports its traces. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended, as the OTLP exporter specification says. */
  readonly tracesUrl: string;
  readonly serviceName: string;
}

/**
 * The standard OpenTelemetry variables. Tracing is on exactly when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set; the main entry point loads the OpenTelemetry SDK only then.
 */
export const tracingVariables = {
  OTEL_EXPORTER_OTLP_ENDPOINT: rule<string | null>(null, 'an http(s) URL', (t) =>
    URL.canParse(t) && ['http:', 'https:'].includes(new URL(t).protocol) ? t : null,
  ),
  // The exporter speaks OTLP over HTTP with JSON bodies; a collector expecting gRPC or protobuf
  // would reject every export, which is better said now than discovered as missing traces.
  OTEL_EXPORTER_OTLP_PROTOCOL: rule<string | null>(null, 'http/json or unset', (t) => (t === 'http/json' ? t : null)),
  OTEL_SERVICE_NAME: text('nft-wallet-service'),
};

/** Null when tracing is off. */
export function tracingConfig(e: Parsed<typeof tracingVariables>): TracingConfig | null {
  if (e.OTEL_EXPORTER_OTLP_ENDPOINT === null) return null;
  return { tracesUrl: `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`, serviceName: e.OTEL_SERVICE_NAME };
}
