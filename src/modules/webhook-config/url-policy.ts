import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, isIPv4, isIPv6 } from 'node:net';

/**
 * The one webhook URL policy (CONTRACT.md section 6). The configuration endpoint checks a URL with
 * it when it is saved, and the delivery code checks again at send time against the address it is
 * about to connect to, because what a hostname resolves to can change after it was saved.
 */
export interface WebhookUrlPolicy {
  /** Accept `http:` URLs; otherwise only `https:`. */
  allowHttp: boolean;
  /** Accept targets in private, loopback, link-local and other non-public ranges. */
  allowPrivateNetworks: boolean;
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** How long a hostname lookup may take before the host counts as unresolvable. */
export const DEFAULT_RESOLVE_TIMEOUT_MS = 5000;

export const FORBIDDEN_TARGET_MESSAGE =
  'must not point to a private, loopback, link-local or otherwise non-public address on this deployment';

/**
 * IPv4 ranges that are not globally reachable (IANA special-purpose registry): a webhook sent
 * there would reach the service's own network rather than an integrator's server.
 */
const FORBIDDEN_IPV4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", including the unspecified 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, where cloud metadata services live
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // former 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, including the broadcast address
];

/** IPv6 ranges inside global unicast (2000::/3) that are nevertheless not globally reachable. */
const FORBIDDEN_IPV6_IN_GLOBAL_UNICAST: ReadonlyArray<readonly [string, number]> = [
  ['2001::', 32], // Teredo: tunnels to an IPv4 address hidden in the rest of the address
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
];

const forbiddenV4 = FORBIDDEN_IPV4.map(([ip, bits]) => ({ bytes: parseIPv4(ip)!, bits }));
const forbiddenV6 = FORBIDDEN_IPV6_IN_GLOBAL_UNICAST.map(([ip, bits]) => ({ bytes: parseIPv6(ip)!, bits }));

/**
 * True when `ip` is an address a webhook must not be sent to unless the deployment allows private
 * networks: private, loopback, link-local, unspecified, CGNAT, multicast, reserved or documentation
 * ranges, in IPv4 or IPv6. IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`
 * in dotted or hex form, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address.
 * IPv6 outside global unicast (2000::/3) is refused. Brackets and a zone index are tolerated.
 * Anything that is not an IP address is refused too, so a caller can never pass by mistake.
 */
export function isForbiddenAddress(ip: string): boolean {
  const text = stripZone(stripBrackets(ip.trim()));
  const v4 = parseIPv4(text);
  if (v4) return isForbiddenIPv4(v4);
  const v6 = parseIPv6(text);
  if (v6) return isForbiddenIPv6(v6);
  return true;
}

/**
 * Checks what can be judged without the network: length, absolute http(s) URL, the scheme
 * against the policy, no credentials, and a literal IP host against the address ranges.
 * Returns null when acceptable, otherwise the reason, phrased to follow the field name ("url ...").
 * A hostname still has to pass {@link resolveWebhookHost}.
 */
export function checkWebhookUrl(url: string, policy: WebhookUrlPolicy): string | null {
  if (url.length === 0) return 'must not be empty';
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  // The URL parser would quietly drop or encode these, so the URL used would differ from the one saved.
  if (/[\s\u0000-\u001f\u007f]/.test(url)) return 'must not contain spaces or control characters';
  // The parser also accepts "https:example.com"; require the usual absolute form.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return 'must be an absolute http or https URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be an absolute http or https URL';
  if (parsed.protocol === 'http:' && !policy.allowHttp) return 'must use https';
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain credentials (user:password@)';
  if (parsed.hostname === '') return 'must name a host';
  const literal = literalIp(parsed.hostname);
  if (literal !== null && !policy.allowPrivateNetworks && isForbiddenAddress(literal)) return FORBIDDEN_TARGET_MESSAGE;
  return null;
}

/** The host part of a URL that passed {@link checkWebhookUrl}, as given to a resolver. */
export function webhookUrlHostname(url: string): string {
  return stripBrackets(new URL(url).hostname);
}

export type WebhookHostErrorReason = 'unresolvable' | 'forbidden';

/** A host that a webhook cannot be sent to; `message` follows the field name ("url ..."). */
export class WebhookHostError extends Error {
  constructor(
    readonly reason: WebhookHostErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookHostError';
  }
}

/** dns.lookup with `all: true`, injectable so the policy can be exercised without a resolver. */
export type LookupAllFn = (hostname: string) => Promise<LookupAddress[]>;

const systemLookupAll: LookupAllFn = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/**
 * Every address `hostname` resolves to (a literal IP resolves to itself). Throws a
 * {@link WebhookHostError}: `unresolvable` when the name does not resolve in time, `forbidden` when
 * private networks are not allowed and ANY of the addresses is forbidden, since a connection may
 * use any of them.
 */
export async function resolveWebhookHost(
  hostname: string,
  policy: Pick<WebhookUrlPolicy, 'allowPrivateNetworks'>,
  options: { timeoutMs?: number; lookupAll?: LookupAllFn } = {},
): Promise<string[]> {
  const host = stripBrackets(hostname.trim());
  if (host === '') throw new WebhookHostError('unresolvable', 'must name a host');
  const literal = literalIp(host);
  let addresses: string[];
  if (literal !== null) {
    addresses = [literal];
  } else {
    const found = await withTimeout(
      (options.lookupAll ?? systemLookupAll)(host),
      options.timeoutMs ?? DEFAULT_RESOLVE_TIMEOUT_MS,
    ).catch(() => null);
    if (!found || found.length === 0) {
      throw new WebhookHostError('unresolvable', `host ${host} could not be resolved`);
    }
    addresses = found.map((entry) => entry.address);
  }
  if (!policy.allowPrivateNetworks && addresses.some(isForbiddenAddress)) {
    throw new WebhookHostError('forbidden', FORBIDDEN_TARGET_MESSAGE);
  }
  return addresses;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect` / undici's `connect` options that applies the policy to the very
 * addresses the socket connects to, so a name that resolves differently at send time than when
 * it was saved (DNS rebinding) is still refused. Literal IP hosts never reach a lookup: check
 * those with {@link checkWebhookUrl} before sending.
 */
export function createGuardedLookup(
  policy: Pick<WebhookUrlPolicy, 'allowPrivateNetworks'>,
  lookupAll: LookupAllFn = systemLookupAll,
): (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    lookupAll(hostname).then(
      (found) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const addresses = family === 4 || family === 6 ? found.filter((a) => a.family === family) : found;
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
        } else if (!policy.allowPrivateNetworks && addresses.some((a) => isForbiddenAddress(a.address))) {
          callback(new WebhookHostError('forbidden', FORBIDDEN_TARGET_MESSAGE), '');
        } else if (options.all) {
          callback(null, addresses);
        } else {
          callback(null, addresses[0].address, addresses[0].family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lookup timed out')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function stripZone(ip: string): string {
  const percent = ip.indexOf('%');
  return percent >= 0 && ip.includes(':') ? ip.slice(0, percent) : ip;
}

function literalIp(host: string): string | null {
  const bare = stripBrackets(host);
  return isIP(stripZone(bare)) !== 0 ? bare : null;
}

function isForbiddenIPv4(bytes: Uint8Array): boolean {
  return forbiddenV4.some((range) => inPrefix(bytes, range.bytes, range.bits));
}

function isForbiddenIPv6(bytes: Uint8Array): boolean {
  const embedded = embeddedIPv4(bytes);
  if (embedded) return isForbiddenIPv4(embedded);
  // Outside 2000::/3 lies everything local or special: ::/128, ::1, ::/96 (IPv4-compatible),
  // 64:ff9b:1::/48, 100::/64, fc00::/7, fe80::/10, fec0::/10, ff00::/8, and unassigned space.
  if ((bytes[0] & 0xe0) !== 0x20) return true;
  return forbiddenV6.some((range) => inPrefix(bytes, range.bytes, range.bits));
}

/** The IPv4 address an IPv6 address stands for, when it is one of the forms that carry one. */
function embeddedIPv4(bytes: Uint8Array): Uint8Array | null {
  const zeros = (from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
  // ::ffff:a.b.c.d (IPv4-mapped)
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.slice(12, 16);
  // ::ffff:0:a.b.c.d (IPv4-translated)
  if (zeros(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zeros(10, 12)) return bytes.slice(12, 16);
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix)
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) {
    return bytes.slice(12, 16);
  }
  // 2002:aabb:ccdd::/48 (6to4)
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6);
  return null;
}

function inPrefix(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  if (bytes.length !== prefix.length) return false;
  const whole = Math.floor(bits / 8);
  for (let i = 0; i < whole; i += 1) if (bytes[i] !== prefix[i]) return false;
  const rest = bits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (bytes[whole] & mask) === (prefix[whole] & mask);
}

function parseIPv4(text: string): Uint8Array | null {
  if (!isIPv4(text)) return null;
  return Uint8Array.from(text.split('.').map(Number));
}

function parseIPv6(text: string): Uint8Array | null {
  if (!isIPv6(text)) return null;
  let source = text.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(source);
  if (dotted) {
    const v4 = parseIPv4(dotted[1]);
    if (!v4) return null;
    const hex = `${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
    source = source.slice(0, dotted.index) + hex;
  }
  const halves = source.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  return bytes;
}
