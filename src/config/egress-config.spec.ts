import { loadConfig as load } from './app-config';
import { defaultWebhookPorts, INTERNAL_SERVICE_PORTS, PortRange } from './egress-config';

const loadConfig = (env: Record<string, string | undefined>) => load({ NODE_ENV: 'development', ...env });
const PRODUCTION = {
  NODE_ENV: 'production',
  AUDIT_CHAIN_KEY: Buffer.alloc(32, 5).toString('base64'),
  METRICS_TOKEN: 'metrics-token-0123456789',
  SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
  MEDIA_SIGNING_KEY: Buffer.alloc(32, 6).toString('base64'),
};
const within = (port: number, ranges: readonly PortRange[]) => ranges.some(([from, to]) => port >= from && port <= to);

describe('egress configuration', () => {
  it('allows http and private networks in development only, unless set', () => {
    expect(loadConfig({}).egress).toMatchObject({ allowHttp: true, allowPrivateNetworks: true });
    expect(load(PRODUCTION).egress).toMatchObject({ allowHttp: false, allowPrivateNetworks: false });
    expect(load({ ...PRODUCTION, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'yes' }).egress).toMatchObject({
      allowHttp: true,
      allowPrivateNetworks: true,
    });
  });

  it('sends outbound requests directly unless WEBHOOK_PROXY_URL names an http proxy', () => {
    expect(loadConfig({}).egress.proxyUrl).toBeNull();
    expect(loadConfig({ WEBHOOK_PROXY_URL: 'http://egress.internal:3128' }).egress.proxyUrl).toBe('http://egress.internal:3128/');
  });

  it('reads WEBHOOK_ALLOWED_PORTS, defaulting to 443 (80 with http) and 1024-65535 minus internal ports', () => {
    expect(loadConfig({ WEBHOOK_ALLOWED_PORTS: '443,8000-8999' }).egress.allowedPorts).toEqual([
      [443, 443],
      [8000, 8999],
    ]);
    expect(load(PRODUCTION).egress.allowedPorts[0]).toEqual([443, 443]);
    expect(loadConfig({}).egress.allowedPorts.slice(0, 2)).toEqual([
      [80, 80],
      [443, 443],
    ]);
  });

  it('leaves every internal service port out of the default and keeps the rest of 1024-65535', () => {
    const ranges = defaultWebhookPorts(false);
    for (const port of INTERNAL_SERVICE_PORTS) expect(within(port, ranges)).toBe(false);
    let allowed = 0;
    for (let port = 1; port <= 65535; port += 1) if (within(port, ranges)) allowed += 1;
    expect(allowed).toBe(1 + (65535 - 1024 + 1) - INTERNAL_SERVICE_PORTS.length);
  });

  it.each(['0', '65536', '80-', 'https', '9000-8000', '443,,80'])('refuses WEBHOOK_ALLOWED_PORTS=%p', (text) => {
    expect(() => loadConfig({ WEBHOOK_ALLOWED_PORTS: text })).toThrow(/WEBHOOK_ALLOWED_PORTS must be comma-separated ports or ranges/);
  });

  it('takes the default ports when WEBHOOK_ALLOWED_PORTS is blank', () => {
    expect(loadConfig({ WEBHOOK_ALLOWED_PORTS: ' ' }).egress.allowedPorts).toEqual(defaultWebhookPorts(true));
  });
});
