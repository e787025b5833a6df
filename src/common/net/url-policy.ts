import { withTimeout } from '../async/with-timeout';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';
import type { AppConfig } from '../../config/app-config';
import { defaultWebhookPorts, type PortRange } from '../../config/egress-config';

/**
 * The one URL policy for outbound requests (docs/ARCHITECTURE.md "The webhook URL policy"), shared
 * by webhook-endpoints, webhooks and the token metadata fetcher. The configuration endpoint checks a
 * URL with it when it is saved, and the sending code checks again at send time against the
 * address it is about to connect to, because what a hostname resolves to can change after it was
 * saved.
 */
export interface WebhookUrlPolicy {
  /** Accept `http:` URLs; otherwise only `https:`. */
  allowHttp: boolean;
  /** Accept targets in private, loopback, link-local and other non-public ranges. */
  allowPrivateNetworks: boolean;
  /** Destination ports accepted (WEBHOOK_ALLOWED_PORTS); absent means {@link defaultWebhookPorts}. */
  allowedPorts?: readonly PortRange[];
}

/** The policy and the route out (the egress proxy, or none), as the deployment configured them. */
export interface EgressPolicy extends WebhookUrlPolicy {
  allowedPorts: readonly PortRange[];
  proxyUrl: string | null;
}

/** The deployment's egress policy: what every outbound request (webhook, OAuth2 token, token metadata) is held to. */
export function urlPolicyOf(config: Pick<AppConfig, 'egress'>): EgressPolicy {
  const { allowHttp, allowPrivateNetworks, allowedPorts, proxyUrl } = config.egress;
  return { allowHttp, allowPrivateNetworks, allowedPorts, proxyUrl };
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** How long a hostname lookup may take before the host counts as unresolvable. */
const DEFAULT_RESOLVE_TIMEOUT_MS = 5000;

/**
 * The one refusal for a host that resolves to a refused address and for one that does not resolve
 * at all: two messages would let an admin probe which internal hostnames exist.
 */
export const FORBIDDEN_TARGET_MESSAGE =
  'must point to a host this deployment may send to: it did not resolve, or it resolved to a private, loopback, link-local or otherwise non-public address';

/**
 * IPv4 ranges that are not globally reachable (IANA special-purpose registry): a webhook sent
 * there would reach the service's own network rather than an integrator's server.
 */
const FORBIDDEN_IPV4 = [
  '0.0.0.0/8', // "this network", including the unspecified 0.0.0.0
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, where cloud metadata services live
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // former 6to4 relay anycast
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, including the broadcast address
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

/** IPv6 is allowed only inside global unicast (2000::/3), minus these ranges. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const FORBIDDEN_IPV6_IN_GLOBAL_UNICAST = [
  '2001::/32', // Teredo: tunnels to an IPv4 address hidden in the rest of the address
  '2001:2::/48', // benchmarking
  '2001:10::/28', // ORCHID
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

/** IPv6 ranges whose last 32 bits are an IPv4 address the packet ends up at. */
const CARRIES_IPV4_IN_LOW_BITS = [
  '::ffff:0:0/96', // IPv4-mapped
  '::ffff:0:0:0/96', // IPv4-translated
  '64:ff9b::/96', // NAT64 well-known prefix
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));
const IPV4_COMPATIBLE = /^::\d{1,3}(?:\.\d{1,3}){3}$/;
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');

function isPortAllowed(port: number, ranges: readonly PortRange[]): boolean {
  return ranges.some(([from, to]) => port >= from && port <= to);
}

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
  // node's strict check first: ipaddr.js alone also reads "1" or "0x7f.1" as IPv4 addresses.
  if (isIP(text) === 0) return true;
  // ipaddr.js reads the deprecated IPv4-compatible form "::a.b.c.d" as IPv4-mapped
  // "::ffff:a.b.c.d"; it really is ::/96, outside global unicast.
  if (IPV4_COMPATIBLE.test(text)) return true;
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return isForbiddenIPv4(address as ipaddr.IPv4);
  return isForbiddenIPv6(address as ipaddr.IPv6);
}

/**
 * Checks what can be judged without the network: length, absolute http(s) URL, the scheme
 * against the policy, no credentials, the port, and a literal IP host against the address ranges.
 * Returns null when acceptable, otherwise the reason, phrased to follow the field name ("url ...").
 * A hostname still has to pass {@link resolveWebhookHost}.
 */
export function checkWebhookUrl(url: string, policy: WebhookUrlPolicy): string | null {
  if (url.length === 0) return 'must not be empty';
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  // The URL parser would quietly drop or encode these, so the URL used would differ from the one saved.
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
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
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  if (!isPortAllowed(port, policy.allowedPorts ?? defaultWebhookPorts(policy.allowHttp))) {
    return `must not use port ${port} on this deployment (allowed: ${describePorts(policy.allowedPorts ?? defaultWebhookPorts(policy.allowHttp))})`;
  }
  const literal = literalIp(parsed.hostname);
  if (literal !== null && !policy.allowPrivateNetworks && isForbiddenAddress(literal)) return FORBIDDEN_TARGET_MESSAGE;
  return null;
}

function describePorts(ranges: readonly PortRange[]): string {
  const text = ranges.map(([from, to]) => (from === to ? String(from) : `${from}-${to}`)).join(', ');
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
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
      'lookup timed out',
    ).catch(() => null);
    if (!found || found.length === 0) {
      throw new WebhookHostError('unresolvable', FORBIDDEN_TARGET_MESSAGE);
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
  // Where private networks are refused, a name that does not resolve fails an attempt exactly as
  // one resolving to a refused address does, so the delivery log cannot be used to probe names.
  const unresolved = (error: NodeJS.ErrnoException): Error =>
    policy.allowPrivateNetworks ? error : new WebhookHostError('unresolvable', FORBIDDEN_TARGET_MESSAGE);
  return (hostname, options, callback) => {
    lookupAll(hostname).then(
      (found) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const addresses = family === 4 || family === 6 ? found.filter((a) => a.family === family) : found;
        if (addresses.length === 0) {
          callback(unresolved(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })), '');
        } else if (!policy.allowPrivateNetworks && addresses.some((a) => isForbiddenAddress(a.address))) {
          callback(new WebhookHostError('forbidden', FORBIDDEN_TARGET_MESSAGE), '');
        } else if (options.all) {
          callback(null, addresses);
        } else {
          callback(null, addresses[0].address, addresses[0].family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(unresolved(error), ''),
    );
  };
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

function isForbiddenIPv4(address: ipaddr.IPv4): boolean {
  return FORBIDDEN_IPV4.some((range) => address.match(range));
}

function isForbiddenIPv6(address: ipaddr.IPv6): boolean {
  const embedded = embeddedIPv4(address);
  if (embedded) return isForbiddenIPv4(embedded);
  // Outside 2000::/3 lies everything local or special: ::/128, ::1, ::/96 (IPv4-compatible),
  // 64:ff9b:1::/48, 100::/64, fc00::/7, fe80::/10, fec0::/10, ff00::/8, and unassigned space.
  if (!address.match(GLOBAL_UNICAST)) return true;
  return FORBIDDEN_IPV6_IN_GLOBAL_UNICAST.some((range) => address.match(range));
}

/** The IPv4 address an IPv6 address stands for, when it is one of the forms that carry one. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const bytes = address.toByteArray();
  if (CARRIES_IPV4_IN_LOW_BITS.some((range) => address.match(range))) return new ipaddr.IPv4(bytes.slice(12, 16));
  // 2002:aabb:ccdd::/48 (6to4)
  if (address.match(SIX_TO_FOUR)) return new ipaddr.IPv4(bytes.slice(2, 6));
  return null;
}
