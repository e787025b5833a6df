import { ConfigError } from './app-config';

type Env = Record<string, string | undefined>;

/** Where and as what the process exports its traces; null when tracing is off. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended, as the OTLP exporter specification says. */
  readonly tracesUrl: string;
  readonly serviceName: string;
}

const DEFAULT_SERVICE_NAME = 'nft-wallet-service';

/**
 * Tracing is on exactly when the standard OTEL_EXPORTER_OTLP_ENDPOINT is set. Read apart from
 * the rest of the configuration because the main entry point must decide it before anything
 * else is loaded: with the variable unset, no OpenTelemetry SDK module is ever required.
 */
export function loadTracingConfig(env: Env = process.env): TracingConfig | null {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() ?? '';
  if (endpoint === '') return null;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ConfigError(`Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got "${endpoint}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got "${endpoint}")`);
  }
  // The exporter speaks OTLP over HTTP with JSON bodies; a collector expecting gRPC or protobuf
  // would reject every export, which is better said now than discovered as missing traces.
  const protocol = env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ?? '';
  if (protocol !== '' && protocol !== 'http/json') {
    throw new ConfigError(`Invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL must be http/json or unset (got "${protocol}")`);
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME;
  return { tracesUrl: `${endpoint.replace(/\/+$/, '')}/v1/traces`, serviceName };
}
