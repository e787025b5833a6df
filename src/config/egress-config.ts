import { bool, Parsed, rule } from './variables';

/** An inclusive range of TCP ports. */
export type PortRange = readonly [number, number];

/**
 * Where the service's outbound requests may go, and through what: every URL someone else chose
 * (webhook receivers and their OAuth2 token URLs, token metadata documents) is held to the same
 * policy (src/common/net/url-policy.ts, `urlPolicyOf`). The variables keep their WEBHOOK_ names,
 * which deployments already set, though they govern every outbound request.
 */
export interface EgressConfig {
  /** WEBHOOK_ALLOW_HTTP: accept `http:` URLs; otherwise only `https:`. */
  readonly allowHttp: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: accept targets in private, loopback, link-local and other non-public ranges. */
  readonly allowPrivateNetworks: boolean;
  /** WEBHOOK_ALLOWED_PORTS: destination ports a URL may use (inclusive ranges). */
  readonly allowedPorts: readonly PortRange[];
  /** WEBHOOK_PROXY_URL: every outbound request goes through this HTTP proxy, CONNECT for every destination; null connects directly. */
  readonly proxyUrl: string | null;
  /**
   * DESTINATION_ALLOWED_HOSTS: broker `host:port` pairs (lowercase, as written in a destination
   * url) that may be on a private or loopback address where private networks are refused.
   */
  readonly destinationAllowedHosts: readonly string[];
}

/**
 * Internal services commonly reachable next to this one (databases, caches, queues, search,
 * orchestration): refused as destination ports by default even though they lie above 1023.
 */
export const INTERNAL_SERVICE_PORTS: readonly number[] = [
  1433, 1521, 2049, 2375, 2376, 2379, 2380, 3306, 3389, 4369, 5432, 5601, 5672, 5984, 6379, 6443, 7000, 7001, 8086, 8500, 8600, 9042, 9092,
  9093, 9200, 9300, 10250, 10255, 11211, 15672, 25672, 26379, 27017, 27018, 27019, 28017, 50070,
];

/**
 * The default WEBHOOK_ALLOWED_PORTS: 443, 80 when http is allowed, and 1024-65535 minus
 * {@link INTERNAL_SERVICE_PORTS}.
 */
export function defaultWebhookPorts(allowHttp: boolean): PortRange[] {
  const ranges: PortRange[] = allowHttp
    ? [
        [80, 80],
        [443, 443],
      ]
    : [[443, 443]];
  let from = 1024;
  for (const port of [...INTERNAL_SERVICE_PORTS].sort((a, b) => a - b)) {
    if (port > from) ranges.push([from, port - 1]);
    from = Math.max(from, port + 1);
  }
  if (from <= 65535) ranges.push([from, 65535]);
  return ranges;
}

/** Parses `443,8443,9000-9100`; null unless every entry is a port or range within 1-65535. */
function parsePortList(text: string): PortRange[] | null {
  const ranges: PortRange[] = [];
  for (const entry of text.split(',').map((e) => e.trim())) {
    const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(entry);
    if (!match) return null;
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (from < 1 || to > 65535 || from > to) return null;
    ranges.push([from, to]);
  }
  return ranges;
}

/** An http proxy's URL without path, query or fragment (credentials allowed: Proxy-Authorization). */
function parseProxyUrl(text: string): string | null {
  if (!URL.canParse(text)) return null;
  const parsed = new URL(text);
  if (parsed.protocol !== 'http:' || parsed.hostname === '') return null;
  if ((parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search !== '' || parsed.hash !== '') return null;
  return parsed.toString();
}

/**
 * Parses `rabbit.internal:5672,10.0.0.7:4222,[fd00::1]:1883`: each entry a hostname, an IPv4
 * address or a bracketed IPv6 address, a colon and a port; null when any entry is not.
 */
export function parseHostPortList(text: string): string[] | null {
  const entries: string[] = [];
  for (const entry of text.split(',').map((e) => e.trim())) {
    const match =
      /^((?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/.exec(
        entry,
      );
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) return null;
    entries.push(`${match[1].toLowerCase()}:${Number(match[2])}`);
  }
  return entries;
}

/** The egress variables; production refuses http and private networks unless they are set. */
export const egressVariables = (production: boolean) => ({
  WEBHOOK_ALLOW_HTTP: bool(!production),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool(!production),
  // Unset: the default for WEBHOOK_ALLOW_HTTP (defaultWebhookPorts).
  WEBHOOK_ALLOWED_PORTS: rule<PortRange[] | null>(null, 'comma-separated ports or ranges such as 443,8443,9000-9100', parsePortList),
  // Unset: outbound requests connect directly.
  WEBHOOK_PROXY_URL: rule<string | null>(null, 'an http:// proxy URL (scheme, host and port; no path)', parseProxyUrl, false),
  DESTINATION_ALLOWED_HOSTS: rule<string[]>(
    [],
    'comma-separated host:port entries such as rabbit.internal:5672,10.0.0.7:4222',
    parseHostPortList,
  ),
});

export function egressConfig(e: Parsed<ReturnType<typeof egressVariables>>): EgressConfig {
  return {
    allowHttp: e.WEBHOOK_ALLOW_HTTP,
    allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    allowedPorts: e.WEBHOOK_ALLOWED_PORTS ?? defaultWebhookPorts(e.WEBHOOK_ALLOW_HTTP),
    proxyUrl: e.WEBHOOK_PROXY_URL,
    destinationAllowedHosts: e.DESTINATION_ALLOWED_HOSTS,
  };
}
