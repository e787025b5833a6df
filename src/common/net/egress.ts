import { Agent, Dispatcher, ProxyAgent } from 'undici';
import { createGuardedLookup, resolveWebhookHost, WebhookUrlPolicy } from './url-policy';

/** Client certificate and trust for one destination (mutual TLS); absent for the usual case. */
export interface EgressTls {
  cert?: string;
  key?: string;
  ca?: string[];
}

export interface EgressOptions {
  /** WEBHOOK_PROXY_URL: every request goes through this HTTP proxy (CONNECT); null connects directly. */
  proxyUrl: string | null;
  /** Whether the URL policy's address check applies (false only for the operator's own IPFS gateway). */
  guarded: boolean;
  allowPrivateNetworks: boolean;
  /** Pool and timeout settings, as for an undici Agent. */
  agent: Omit<Agent.Options, 'connect'>;
  tls?: EgressTls;
}

/**
 * The one way outbound requests leave the service (webhooks, OAuth2 tokens, token metadata).
 * Directly, the guarded lookup judges the very address connected to. Through the egress proxy,
 * every destination, http or https, is reached through a CONNECT tunnel (so a deployment has
 * fixed egress addresses); the service then never resolves the destination for the socket, so
 * callers judge it first with {@link checkProxiedDestination}. The proxy itself is the operator's
 * choice and is not held to the policy.
 */
export function createEgressDispatcher(options: EgressOptions): Dispatcher {
  const tls = options.tls ?? {};
  if (options.proxyUrl === null) {
    const lookup = options.guarded ? { lookup: createGuardedLookup({ allowPrivateNetworks: options.allowPrivateNetworks }) } : {};
    return new Agent({ ...options.agent, connect: { ...lookup, ...tls } });
  }
  return new ProxyAgent({ ...options.agent, uri: options.proxyUrl, proxyTunnel: true, requestTls: tls });
}

/**
 * Through the proxy, the URL policy's address check happens here, before the request: the name
 * is resolved and refused (WebhookHostError) if any address is one the policy forbids. Directly,
 * the guarded lookup does it at connect time and this does nothing.
 */
export async function checkProxiedDestination(
  url: string,
  proxyUrl: string | null,
  policy: Pick<WebhookUrlPolicy, 'allowPrivateNetworks'>,
): Promise<void> {
  if (proxyUrl === null || policy.allowPrivateNetworks) return;
  await resolveWebhookHost(new URL(url).hostname, policy);
}
