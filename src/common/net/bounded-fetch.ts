import { Dispatcher } from 'undici';
import { checkProxiedDestination, createEgressDispatcher } from './egress';
import { classifyFetchFailure } from './fetch-failure';
import type { PortRange } from '../../config/egress-config';
import { checkWebhookUrl } from './url-policy';

/**
 * How a bounded fetch failed: refused by the URL policy (`blocked`; the message is the policy's
 * reason, phrased to follow "the URL"), sent by the trusted prefix's host outside its path
 * (`outsidePrefix`), out of time (`timeout`), a connection or protocol error (`network`), a
 * non-2xx answer (`status`), a body over the cap (`tooLarge`), or more redirects than allowed
 * (`redirects`).
 */
export type BoundedFetchFailureKind = 'blocked' | 'outsidePrefix' | 'timeout' | 'network' | 'status' | 'tooLarge' | 'redirects';

export class BoundedFetchError extends Error {
  constructor(
    readonly kind: BoundedFetchFailureKind,
    message: string,
    /** The HTTP status of a `status` failure. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'BoundedFetchError';
  }
}

/**
 * A location fetched without the URL policy: the operator's own IPFS gateway, trusted only under
 * its path (`/ipfs/` of `https://gateway.example/ipfs/`), so its host's other paths are not.
 */
export interface TrustedPrefix {
  origin: string;
  /** Ends with '/'. */
  path: string;
}

/** Whether a URL is under the prefix: its origin, and a path below the prefix's own. */
export function isUnderPrefix(url: URL, prefix: TrustedPrefix): boolean {
  return url.origin === prefix.origin && url.pathname.startsWith(prefix.path) && url.pathname.length > prefix.path.length;
}

export interface BoundedFetchOptions {
  /** The whole fetch: connection, redirects and body. */
  timeoutMs: number;
  /** The body's cap, declared (Content-Length) or read: reading stops there. */
  maxBytes: number;
  /** The webhook URL policy: whoever named the URL chose where the service connects. */
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
  allowedPorts: readonly PortRange[];
  /** WEBHOOK_PROXY_URL; null connects directly. */
  proxyUrl: string | null;
  /** Redirects followed; each target is checked like the first. */
  maxRedirects: number;
  headers: Record<string, string>;
  /** Connections kept per origin. */
  connections?: number;
}

/**
 * GETs a URL someone else chose (a token URI, a token image) under the webhook URL policy, bounded
 * in time and size: scheme and port checked on every URL, redirects included; the address
 * connected to checked by the guarded lookup (or resolved and checked first when going through
 * the egress proxy). A `trusted` prefix (the operator's IPFS gateway) is fetched without the
 * policy; a redirect away from it is checked again.
 */
export class BoundedHttpClient {
  private readonly guarded: Dispatcher;
  private readonly trusted: Dispatcher;

  constructor(private readonly options: BoundedFetchOptions) {
    const agent = {
      keepAliveTimeout: 10_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connectTimeout: options.timeoutMs,
      connections: options.connections ?? 16,
    };
    const egress = { proxyUrl: options.proxyUrl, allowPrivateNetworks: options.allowPrivateNetworks, agent };
    this.guarded = createEgressDispatcher({ ...egress, guarded: true });
    this.trusted = createEgressDispatcher({ ...egress, guarded: false });
  }

  /** The body at `url`. Throws BoundedFetchError. */
  async fetch(url: string, trusted: TrustedPrefix | null = null): Promise<Buffer> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let target = url;
    for (let hop = 0; hop <= this.options.maxRedirects; hop++) {
      const parsed = new URL(target);
      const isTrusted = trusted !== null && isUnderPrefix(parsed, trusted);
      // The trusted host beyond its path is the operator's network, not what the prefix serves.
      if (trusted !== null && !isTrusted && parsed.origin === trusted.origin) {
        throw new BoundedFetchError('outsidePrefix', 'the IPFS gateway redirected out of its path');
      }
      if (!isTrusted) {
        // Literal IPs never reach the guarded lookup; the URL check judges them.
        const reason = checkWebhookUrl(target, this.options);
        if (reason) throw new BoundedFetchError('blocked', reason);
      }
      let res: Dispatcher.ResponseData;
      try {
        if (!isTrusted) await checkProxiedDestination(target, this.options.proxyUrl, this.options);
        res = await (isTrusted ? this.trusted : this.guarded).request({
          origin: parsed.origin,
          path: `${parsed.pathname}${parsed.search}`,
          method: 'GET',
          headers: this.options.headers,
          signal,
        });
      } catch (error) {
        throw this.describe(error);
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof res.headers.location === 'string') {
        await res.body.dump({ limit: 16 * 1024 }).catch(() => undefined);
        try {
          target = new URL(res.headers.location, target).toString();
        } catch {
          throw new BoundedFetchError('network', 'a redirect named no valid location');
        }
        continue;
      }
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump({ limit: 16 * 1024 }).catch(() => undefined);
        throw new BoundedFetchError('status', `answered ${res.statusCode}`, res.statusCode);
      }
      return this.readBounded(res, signal);
    }
    throw new BoundedFetchError('redirects', `more than ${this.options.maxRedirects} redirects`);
  }

  async close(): Promise<void> {
    await Promise.all([this.guarded.close(), this.trusted.close()]);
  }

  /** Ends every request in flight at once (they fail as network errors), for a process that stops. */
  async destroy(): Promise<void> {
    await Promise.all([this.guarded.destroy(), this.trusted.destroy()]);
  }

  private async readBounded(res: Dispatcher.ResponseData, signal: AbortSignal): Promise<Buffer> {
    const tooLarge = () => new BoundedFetchError('tooLarge', `the body is larger than ${this.options.maxBytes} bytes`);
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.options.maxBytes) {
      res.body.destroy();
      throw tooLarge();
    }
    // The deadline covers the body too: a server trickling bytes is cut when the time is up.
    const onAbort = () => res.body.destroy(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        const buffer = chunk as Buffer;
        size += buffer.length;
        if (size > this.options.maxBytes) {
          res.body.destroy();
          throw tooLarge();
        }
        chunks.push(buffer);
      }
    } catch (error) {
      if (error instanceof BoundedFetchError) throw error;
      throw this.describe(signal.aborted ? signal.reason : error);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return Buffer.concat(chunks, size);
  }

  private describe(error: unknown): BoundedFetchError {
    const failure = classifyFetchFailure(error, this.options.timeoutMs);
    if (failure.kind === 'blocked') return new BoundedFetchError('blocked', failure.message);
    return new BoundedFetchError(failure.kind, failure.message);
  }
}
