import { loadConfig as load } from './app-config';
import { ConfigError } from './variables';

const tracing = (env: Record<string, string>) => load({ NODE_ENV: 'development', ...env }).tracing;

describe('tracing configuration', () => {
  it('is off when OTEL_EXPORTER_OTLP_ENDPOINT is unset or blank', () => {
    expect(tracing({})).toBeNull();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeNull();
  });

  it('exports to the endpoint with /v1/traces appended, under the default or given service name', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'nft-wallet-service',
    });
    expect(
      tracing({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/base/',
        OTEL_SERVICE_NAME: 'wallets',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }),
    ).toEqual({ tracesUrl: 'https://otel.example/base/v1/traces', serviceName: 'wallets' });
  });

  it('refuses an endpoint that is not an http(s) URL, and a protocol other than http/json', () => {
    expect(() => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(ConfigError);
    expect(() => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
  });
});
