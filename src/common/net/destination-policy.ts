import { FORBIDDEN_TARGET_MESSAGE, isForbiddenAddress, LookupAllFn, resolveWebhookHost, WebhookHostError } from './url-policy';

/**
 * The address policy of message brokers (docs/ARCHITECTURE.md "The webhook URL policy"): outside
 * production any host; where private networks are refused, a broker whose host is or resolves to
 * a private, loopback or link-local address is refused unless its `host:port`, as written in its
 * url, is listed in DESTINATION_ALLOWED_HOSTS. The HTTP rules (https, WEBHOOK_ALLOWED_PORTS, the
 * egress proxy) do not apply: brokers listen on their own ports, speak their own TLS, and are
 * connected to directly.
 */
export interface DestinationPolicy {
  allowPrivateNetworks: boolean;
  /** Lowercase `host:port` entries (DESTINATION_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
}

export function destinationPolicyOf(config: {
  egress: { allowPrivateNetworks: boolean; destinationAllowedHosts: readonly string[] };
}): DestinationPolicy {
  return { allowPrivateNetworks: config.egress.allowPrivateNetworks, allowedHosts: config.egress.destinationAllowedHosts };
}

/** Whether the policy lets `hostPort` (lowercase, as written in the url) be anywhere, private networks included. */
export function destinationHostListed(hostPort: string, policy: DestinationPolicy): boolean {
  return policy.allowedHosts.includes(hostPort.toLowerCase());
}

/**
 * The addresses a broker's host may be connected at, or a WebhookHostError (one message whether
 * it did not resolve or resolved to a refused address, so names cannot be probed). Checked when a
 * destination is saved and again, on the resolved addresses, before each connection is opened.
 */
export async function checkDestinationHost(
  hostname: string,
  hostPort: string,
  policy: DestinationPolicy,
  lookupAll?: LookupAllFn,
): Promise<string[]> {
  const allowPrivate = policy.allowPrivateNetworks || destinationHostListed(hostPort, policy);
  const addresses = await resolveWebhookHost(hostname, { allowPrivateNetworks: allowPrivate }, lookupAll ? { lookupAll } : {});
  if (!allowPrivate && addresses.some(isForbiddenAddress)) throw new WebhookHostError('forbidden', FORBIDDEN_TARGET_MESSAGE);
  return addresses;
}
