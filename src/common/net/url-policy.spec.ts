import type { LookupAddress } from 'node:dns';
import {
  checkWebhookUrl,
  createGuardedLookup,
  FORBIDDEN_TARGET_MESSAGE,
  isForbiddenAddress,
  resolveWebhookHost,
  WebhookHostError,
  webhookUrlHostname,
} from './url-policy';

const STRICT = { allowHttp: false, allowPrivateNetworks: false };
const OPEN = { allowHttp: true, allowPrivateNetworks: true };

const fakeDns =
  (table: Record<string, LookupAddress[]>) =>
  (hostname: string): Promise<LookupAddress[]> => {
    const found = table[hostname];
    // Rejects rather than throws, as dns.lookup does: callers chain .then() on the lookup.
    if (!found) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(found);
  };

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

describe('isForbiddenAddress', () => {
  it.each([
    // unspecified and "this network"
    '0.0.0.0',
    '0.1.2.3',
    // loopback
    '127.0.0.1',
    '127.255.255.254',
    // RFC 1918
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '192.168.255.255',
    // CGNAT
    '100.64.0.1',
    '100.127.255.255',
    // link-local, including cloud metadata
    '169.254.0.1',
    '169.254.169.254',
    // special, documentation, benchmarking, multicast, reserved, broadcast
    '192.0.0.8',
    '192.0.2.10',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
  ])('refuses IPv4 %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '169.253.255.255',
    '11.0.0.1',
    '126.255.255.255',
    '128.0.0.1',
    '223.255.255.255',
  ])('accepts public IPv4 %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });

  it.each([
    '::',
    '::1',
    '0:0:0:0:0:0:0:1',
    '0000:0000:0000:0000:0000:0000:0000:0001',
    '[::1]',
    // unique local fc00::/7
    'fc00::1',
    'fd12:3456:789a::1',
    // link-local fe80::/10, with and without a zone
    'fe80::1',
    'febf:ffff::1',
    'fe80::1%eth0',
    // site-local, multicast, discard, documentation, Teredo, benchmarking
    'fec0::1',
    'ff02::1',
    'ff05::1:3',
    '100::1',
    '2001:db8::1',
    '3fff::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:2::1',
    // IPv4-mapped, dotted and hex, of private targets
    '::ffff:127.0.0.1',
    '::FFFF:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:0001',
    '[::ffff:127.0.0.1]',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:0.0.0.0',
    '::ffff:100.64.0.1',
    '::ffff:192.168.1.1',
    // IPv4-translated, IPv4-compatible, NAT64 and 6to4 carrying private targets
    '::ffff:0:127.0.0.1',
    '::127.0.0.1',
    '::10.0.0.1',
    '::8.8.8.8',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a00:1',
    '64:ff9b:1::1',
    '2002:7f00:1::1',
    '2002:c0a8:101::1',
    // outside global unicast
    '4000::1',
    'e000::1',
  ])('refuses IPv6 %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each([
    '2606:2800:220:1:248:1893:25c8:1946',
    '2a00:1450:4001:80b::200e',
    '2001:4860:4860::8888',
    '[2001:4860:4860::8888]',
    '::ffff:93.184.216.34',
    '::ffff:5db8:d822',
    '64:ff9b::93.184.216.34',
    '2002:5db8:d822::1',
  ])('accepts public IPv6 %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });

  it.each(['', 'localhost', 'example.com', '127.1', '0x7f000001', '2130706433', '1.2.3', '::ffff:1.2.3.4.5', '1:2:3:4:5:6:7:8:9', 'g::1'])(
    'refuses anything that is not an IP address: %p',
    (value) => {
      expect(isForbiddenAddress(value)).toBe(true);
    },
  );
});

describe('checkWebhookUrl', () => {
  it.each([
    'https://example.com/hook',
    'https://example.com:8443/a/b?c=d#e',
    'https://93.184.216.34/hook',
    'https://[2001:4860:4860::8888]/hook',
    'HTTPS://EXAMPLE.COM/',
  ])('accepts %s even in strict mode', (url) => {
    expect(checkWebhookUrl(url, STRICT)).toBeNull();
  });

  it('requires https unless http is allowed', () => {
    expect(checkWebhookUrl('http://example.com/hook', STRICT)).toBe('must use https');
    expect(checkWebhookUrl('http://example.com/hook', { allowHttp: false, allowPrivateNetworks: true })).toBe('must use https');
    expect(checkWebhookUrl('http://example.com/hook', { allowHttp: true, allowPrivateNetworks: false })).toBeNull();
  });

  it.each([
    'ftp://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'ws://example.com/',
    'gopher://example.com/',
  ])('refuses other schemes: %s', (url) => {
    expect(checkWebhookUrl(url, OPEN)).toBe('must be an absolute http or https URL');
  });

  it.each(['/hook', 'example.com/hook', 'https:example.com', 'https:/example.com', '//example.com/hook', 'https://', 'not a url'])(
    'refuses what is not an absolute URL: %p',
    (url) => {
      expect(checkWebhookUrl(url, OPEN)).not.toBeNull();
    },
  );

  it('refuses an empty URL', () => {
    expect(checkWebhookUrl('', OPEN)).toBe('must not be empty');
  });

  it('accepts 2,048 characters and refuses 2,049', () => {
    const base = 'https://example.com/';
    expect(checkWebhookUrl(base + 'a'.repeat(2048 - base.length), STRICT)).toBeNull();
    expect(checkWebhookUrl(base + 'a'.repeat(2049 - base.length), STRICT)).toBe('must be at most 2048 characters');
  });

  it.each(['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/', 'http://a:b@127.0.0.1/'])(
    'refuses credentials: %s',
    (url) => {
      expect(checkWebhookUrl(url, OPEN)).toBe('must not contain credentials (user:password@)');
    },
  );

  it.each([
    ' https://example.com/',
    'https://example.com/ ',
    'https://exa mple.com/',
    'https://example.com/a\tb',
    'https://example.com/\n',
  ])('refuses spaces and control characters: %p', (url) => {
    expect(checkWebhookUrl(url, OPEN)).toBe('must not contain spaces or control characters');
  });

  it.each([
    'https://127.0.0.1/hook',
    'https://127.1/hook',
    'https://2130706433/hook',
    'https://0x7f.0.0.1/hook',
    'https://0177.0.0.1/hook',
    'https://0.0.0.0/',
    'https://10.1.2.3/',
    'https://172.16.5.4/',
    'https://192.168.1.1:8080/',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:7f00:1]/hook',
    'https://[fc00::1]/',
    'https://[fd00::abcd]/',
    'https://[fe80::1]/',
  ])('refuses private, loopback and link-local literal targets in strict mode: %s', (url) => {
    expect(checkWebhookUrl(url, STRICT)).toBe(FORBIDDEN_TARGET_MESSAGE);
    expect(checkWebhookUrl(url, OPEN)).toBeNull();
  });

  it('leaves hostnames to resolution', () => {
    expect(checkWebhookUrl('https://localhost/hook', STRICT)).toBeNull();
  });
});

describe('webhook ports', () => {
  it.each([
    'https://hooks.example.com:6379/x',
    'https://hooks.example.com:5432/x',
    'https://hooks.example.com:9200/x',
    'https://hooks.example.com:11211/x',
    'https://hooks.example.com:27017/x',
    'https://hooks.example.com:3306/x',
    'https://hooks.example.com:22/x',
    'https://hooks.example.com:25/x',
    'https://hooks.example.com:80/x',
    'https://[2001:4860:4860::8888]:6379/x',
  ])('refuses %s by default in production', (url) => {
    expect(checkWebhookUrl(url, STRICT)).toMatch(/^must not use port \d+ on this deployment/);
  });

  it.each([
    'https://hooks.example.com/x',
    'https://hooks.example.com:443/x',
    'https://hooks.example.com:8443/x',
    'https://hooks.example.com:1024/x',
    'https://hooks.example.com:65535/x',
  ])('accepts %s by default', (url) => {
    expect(checkWebhookUrl(url, STRICT)).toBeNull();
  });

  it('accepts port 80 only where http is allowed', () => {
    expect(checkWebhookUrl('http://hooks.example.com/x', OPEN)).toBeNull();
    expect(checkWebhookUrl('https://hooks.example.com:80/x', OPEN)).toBeNull();
    expect(checkWebhookUrl('http://hooks.example.com:6379/x', OPEN)).toMatch(/port 6379/);
  });

  it('applies an explicit list exactly', () => {
    const policy = {
      ...STRICT,
      allowedPorts: [
        [443, 443],
        [9000, 9001],
      ] as const,
    };
    expect(checkWebhookUrl('https://hooks.example.com:9001/x', policy)).toBeNull();
    expect(checkWebhookUrl('https://hooks.example.com/x', policy)).toBeNull();
    expect(checkWebhookUrl('https://hooks.example.com:8443/x', policy)).toMatch(/port 8443/);
  });
});

describe('webhookUrlHostname', () => {
  it('gives the host without brackets, normalised by the URL parser', () => {
    expect(webhookUrlHostname('https://[::1]:8443/x')).toBe('::1');
    expect(webhookUrlHostname('https://EXAMPLE.com/x')).toBe('example.com');
    expect(webhookUrlHostname('https://0x7f.1/x')).toBe('127.0.0.1');
  });
});

describe('resolveWebhookHost', () => {
  const dns = fakeDns({
    'public.test': [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')],
    'internal.test': [v4('10.0.0.7')],
    'mixed.test': [v4('93.184.216.34'), v4('127.0.0.1')],
    'mapped.test': [v6('::ffff:192.168.0.1')],
    'metadata.test': [v4('169.254.169.254')],
    'empty.test': [],
  });

  it('returns every address of a public host', async () => {
    await expect(resolveWebhookHost('public.test', STRICT, { lookupAll: dns })).resolves.toEqual([
      '93.184.216.34',
      '2606:2800:220:1:248:1893:25c8:1946',
    ]);
  });

  it.each(['internal.test', 'mixed.test', 'mapped.test', 'metadata.test'])(
    'refuses %s when any address is forbidden, unless private networks are allowed',
    async (host) => {
      const refused = resolveWebhookHost(host, STRICT, { lookupAll: dns });
      await expect(refused).rejects.toBeInstanceOf(WebhookHostError);
      await expect(refused).rejects.toMatchObject({ reason: 'forbidden', message: FORBIDDEN_TARGET_MESSAGE });
      await expect(resolveWebhookHost(host, OPEN, { lookupAll: dns })).resolves.not.toHaveLength(0);
    },
  );

  it.each(['nowhere.test', 'empty.test', ''])('reports %p as unresolvable in either mode', async (host) => {
    for (const policy of [STRICT, OPEN]) {
      await expect(resolveWebhookHost(host, policy, { lookupAll: dns })).rejects.toMatchObject({ reason: 'unresolvable' });
    }
  });

  it('treats a lookup that does not answer in time as unresolvable', async () => {
    const never = () => new Promise<LookupAddress[]>(() => undefined);
    await expect(resolveWebhookHost('slow.test', OPEN, { lookupAll: never, timeoutMs: 20 })).rejects.toMatchObject({
      reason: 'unresolvable',
    });
  });

  it('resolves literal IPs to themselves without a lookup', async () => {
    const noLookup = jest.fn();
    await expect(resolveWebhookHost('[::1]', OPEN, { lookupAll: noLookup })).resolves.toEqual(['::1']);
    await expect(resolveWebhookHost('93.184.216.34', STRICT, { lookupAll: noLookup })).resolves.toEqual(['93.184.216.34']);
    await expect(resolveWebhookHost('::ffff:127.0.0.1', STRICT, { lookupAll: noLookup })).rejects.toMatchObject({
      reason: 'forbidden',
    });
    expect(noLookup).not.toHaveBeenCalled();
  });

  it('uses the system resolver by default: localhost is loopback', async () => {
    await expect(resolveWebhookHost('localhost', STRICT)).rejects.toMatchObject({ reason: 'forbidden' });
    const addresses = await resolveWebhookHost('localhost', OPEN);
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every(isForbiddenAddress)).toBe(true);
  });
});

describe('createGuardedLookup', () => {
  const dns = fakeDns({
    'public.test': [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')],
    'rebound.test': [v4('93.184.216.34'), v4('127.0.0.1')],
  });
  const call = (lookup: ReturnType<typeof createGuardedLookup>, host: string, options: { all?: boolean; family?: number }) =>
    new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
      lookup(host, options, (error, address, family) => resolve({ error, address, family })),
    );

  it('hands the socket the addresses of a public host, in either callback form', async () => {
    const lookup = createGuardedLookup({ allowPrivateNetworks: false }, dns);
    expect(await call(lookup, 'public.test', {})).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(await call(lookup, 'public.test', { family: 6 })).toEqual({
      error: null,
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
    const all = await call(lookup, 'public.test', { all: true });
    expect(all.error).toBeNull();
    expect(all.address).toHaveLength(2);
  });

  it('refuses a host that resolves to a forbidden address at connect time', async () => {
    const lookup = createGuardedLookup({ allowPrivateNetworks: false }, dns);
    const result = await call(lookup, 'rebound.test', { all: true });
    expect(result.error).toBeInstanceOf(WebhookHostError);
    expect((result.error as WebhookHostError).reason).toBe('forbidden');
    expect((await call(createGuardedLookup({ allowPrivateNetworks: true }, dns), 'rebound.test', {})).error).toBeNull();
  });

  it('passes resolver errors through where private networks are allowed', async () => {
    const result = await call(createGuardedLookup({ allowPrivateNetworks: true }, dns), 'nowhere.test', {});
    expect(result.error).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('where they are refused, reports a name that does not resolve exactly as one resolving to a refused address', async () => {
    const lookup = createGuardedLookup({ allowPrivateNetworks: false }, dns);
    const unresolvable = (await call(lookup, 'nowhere.test', {})).error;
    const forbidden = (await call(lookup, 'rebound.test', {})).error;
    expect(unresolvable).toBeInstanceOf(WebhookHostError);
    expect(unresolvable?.message).toBe(forbidden?.message);
    expect(unresolvable?.message).toBe(FORBIDDEN_TARGET_MESSAGE);
  });
});
