import { createHash } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { LRUCache } from 'lru-cache';
import { Dispatcher } from 'undici';
import { checkProxiedDestination, createEgressDispatcher, EgressTls } from '../../../common/net/egress';
import { checkWebhookUrl } from '../../../common/net/url-policy';
import type { PortRange } from '../../../config/egress-config';
import { deadline } from '../../../common/async/deadline-signal';
import { classifyFetchFailure } from '../../../common/net/fetch-failure';
import {
  basicClientAuthorization,
  GrantedToken,
  OAuth2Client,
  parseTokenResponse,
  readTokenAnswer,
  tokenRequestBody,
  TokenRequestError,
} from './oauth2-tokens';
import { isSuccessStatus } from './webhook.rules';

export type AttemptOutcome = 'success' | 'http_error' | 'timeout' | 'network_error' | 'blocked' | 'broker_error';

export interface SendResult {
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
  durationMs: number;
  /** The start of what the receiver answered (see responseBodyText); null when no answer came. */
  responseBody: string | null;
  /** The receiver's Retry-After header as sent, when it answered one. */
  retryAfter?: string | null;
}

/** What an endpoint with mutual TLS presents and trusts (PEM). */
export interface ClientTls {
  endpointId: string;
  clientCertificate: string;
  clientKey: string;
  caCertificate: string | null;
}
/** How much of a receiver's answer the delivery log keeps. */
export const RESPONSE_BODY_BYTES = 1024;
/** How much of an answer is read at most so its connection can go back to the pool; past it the connection is dropped. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

export interface SenderOptions {
  timeoutMs: number;
  allowHttp: boolean;
  allowPrivateNetworks: boolean;
  allowedPorts?: readonly PortRange[];
  /** WEBHOOK_PROXY_URL; null or absent connects directly. */
  proxyUrl?: string | null;
}

/** How far past the timeout undici's own timers sit; well inside an attempt's lease (attemptLeaseMs). */
const BACKSTOP_MS = 2000;
/** Endpoint URLs whose judgement by the URL policy is remembered; the least recently used is forgotten first. */
const URLS_REMEMBERED = 10_000;

/** A URL as the policy judged it: the reason it is refused, or where its requests go. */
type UrlVerdict = { refused: string } | { refused: null; origin: string; path: string };

/**
 * Sends webhook POSTs over pooled keep-alive connections. The URL policy of the webhook
 * configuration is applied again here, to the address actually connected to, so a hostname that
 * later resolves to a private address (DNS rebinding) is still refused.
 */
export class WebhookSender {
  private readonly agent: Dispatcher;
  /** One pool per endpoint with mutual TLS (its certificate is its own), keyed by endpoint id. */
  private readonly tlsAgents = new Map<string, { fingerprint: string; agent: Dispatcher }>();
  /**
   * What the URL policy said of each URL: the policy is fixed for the sender's life, so a URL is
   * judged and parsed once rather than on every attempt (1-2 % of a worker's CPU in a burst).
   */
  private readonly verdicts = new LRUCache<string, UrlVerdict>({ max: URLS_REMEMBERED });

  constructor(private readonly options: SenderOptions) {
    this.agent = this.newAgent({});
  }

  private newAgent(tls: EgressTls): Dispatcher {
    const options = this.options;
    // No per-origin connection cap: concurrency is bounded per endpoint by the caller, and a cap
    // per origin would let a dead endpoint's hanging requests hold up a healthy endpoint on the
    // same host.
    const agent = {
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      // Backstops only: the attempt's deadline signal decides, after reading what arrived in time
      // (see deadline); undici's own timers would fire first in a stalled process.
      headersTimeout: options.timeoutMs + BACKSTOP_MS,
      bodyTimeout: options.timeoutMs + BACKSTOP_MS,
      connectTimeout: options.timeoutMs + BACKSTOP_MS,
    };
    return createEgressDispatcher({
      proxyUrl: options.proxyUrl ?? null,
      guarded: true,
      allowPrivateNetworks: options.allowPrivateNetworks,
      agent,
      tls,
    });
  }

  /**
   * The pool an endpoint's requests go through: the shared one, or the endpoint's own when it
   * presents a client certificate. A changed certificate gets a new pool (the old one is closed).
   */
  private dispatcherFor(tls: ClientTls | null): Dispatcher {
    if (tls === null) return this.agent;
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([tls.clientCertificate, tls.clientKey, tls.caCertificate]))
      .digest('base64url');
    const existing = this.tlsAgents.get(tls.endpointId);
    if (existing?.fingerprint === fingerprint) return existing.agent;
    if (existing) void existing.agent.close().catch(() => undefined);
    const agent = this.newAgent({
      cert: tls.clientCertificate,
      key: tls.clientKey,
      // A private CA is trusted beside the public ones, for this endpoint only.
      ...(tls.caCertificate === null ? {} : { ca: [...rootCertificates, tls.caCertificate] }),
    });
    this.tlsAgents.set(tls.endpointId, { fingerprint, agent });
    return agent;
  }

  /**
   * POSTs one webhook. `secrets` (the endpoint's access token, its custom header values) are
   * replaced by `[redacted]` wherever the receiver's answer shows them, before its start is kept
   * for the delivery log.
   */
  async send(
    url: string,
    body: string,
    headers: Record<string, string>,
    tls: ClientTls | null = null,
    secrets: readonly string[] = [],
  ): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const verdict = this.verdictOn(url);
    if (verdict.refused !== null) return { outcome: 'blocked', status: null, error: verdict.refused, durationMs: 0, responseBody: null };
    const due = deadline(this.options.timeoutMs);
    try {
      await checkProxiedDestination(url, this.options.proxyUrl ?? null, this.options);
      const res = await this.dispatcherFor(tls).request({
        origin: verdict.origin,
        path: verdict.path,
        method: 'POST',
        headers,
        body,
        signal: due.signal,
      });
      const durationMs = elapsed();
      // Past the kept bytes, enough more to see whole any secret that begins in them.
      const keep = RESPONSE_BODY_BYTES + secretLookaheadBytes(secrets);
      const start = await readStart(res.body, keep, Math.max(DRAIN_LIMIT_BYTES, keep));
      const responseBody = responseBodyText(start.bytes, start.cut, secrets);
      const retryAfter = headerValue(res.headers['retry-after']);
      return isSuccessStatus(res.statusCode)
        ? { outcome: 'success', status: res.statusCode, error: null, durationMs, responseBody, retryAfter }
        : {
            outcome: 'http_error',
            status: res.statusCode,
            error: `receiver answered ${res.statusCode}`,
            durationMs,
            responseBody,
            retryAfter,
          };
    } catch (error) {
      return { ...describeFailure(error, this.options.timeoutMs, tls !== null), status: null, durationMs: elapsed(), responseBody: null };
    } finally {
      due.clear();
    }
  }

  /** The URL policy's judgement of `url` (literal IPs never reach the guarded lookup: this judges them), remembered. */
  private verdictOn(url: string): UrlVerdict {
    let verdict = this.verdicts.get(url);
    if (verdict === undefined) {
      const refused = checkWebhookUrl(url, this.options);
      if (refused !== null) verdict = { refused };
      else {
        const target = new URL(url);
        verdict = { refused: null, origin: target.origin, path: `${target.pathname}${target.search}` };
      }
      this.verdicts.set(url, verdict);
    }
    return verdict;
  }

  /**
   * Asks `client.tokenUrl` for a client credentials token over the same guarded connections as
   * the webhooks (the URL policy holds for the token endpoint too). Throws TokenRequestError,
   * whose message never holds the secret or a token.
   */
  async requestToken(client: OAuth2Client): Promise<GrantedToken> {
    const policyError = checkWebhookUrl(client.tokenUrl, this.options);
    if (policyError) throw new TokenRequestError(`the token URL ${policyError}`, true);
    const target = new URL(client.tokenUrl);
    let status: number;
    let text: string;
    const due = deadline(this.options.timeoutMs);
    try {
      await checkProxiedDestination(client.tokenUrl, this.options.proxyUrl ?? null, this.options);
      const res = await this.agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: basicClientAuthorization(client.clientId, client.clientSecret),
        },
        body: tokenRequestBody(client.scope),
        signal: due.signal,
      });
      status = res.statusCode;
      const length = Number(headerValue(res.headers['content-length']) ?? NaN);
      // An answer refused unread must not hold its connection: it is dropped, not drained.
      text = await readTokenAnswer(res.body, Number.isFinite(length) ? length : null).catch((error: unknown) => {
        res.body.destroy();
        throw error;
      });
    } catch (error) {
      if (error instanceof TokenRequestError) throw error;
      const failure = describeFailure(error, this.options.timeoutMs);
      throw new TokenRequestError(`the token endpoint could not be reached: ${failure.error}`, failure.outcome === 'blocked');
    } finally {
      due.clear();
    }
    return parseTokenResponse(status, text);
  }

  async close(): Promise<void> {
    await Promise.all([this.agent.close(), ...[...this.tlsAgents.values()].map(({ agent }) => agent.close())]);
    this.tlsAgents.clear();
  }
}

/**
 * The first `keep` bytes of an answer's body. The rest is read and thrown away up to `drainLimit`
 * so the connection returns to the pool; a longer answer is cut off (its connection is dropped).
 * An answer that breaks off or runs past the deadline keeps what arrived: the status decided the
 * attempt, the body is only shown in the log.
 */
async function readStart(body: AsyncIterable<Buffer>, keep: number, drainLimit: number): Promise<{ bytes: Buffer; cut: boolean }> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let readBytes = 0;
  try {
    for await (const chunk of body) {
      if (keptBytes < keep) {
        const part = chunk.subarray(0, keep - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      readBytes += chunk.length;
      if (readBytes > drainLimit) break; // leaving the loop destroys the stream and its connection
    }
  } catch {
    // Keep what arrived.
  }
  return { bytes: Buffer.concat(kept, keptBytes), cut: readBytes > keptBytes };
}

/** What stands in the delivery log for a secret a receiver's answer showed. */
export const REDACTED = '[redacted]';

/**
 * The forms in which a secret comes back in an answer: as sent, and escaped as in a JSON string
 * (a receiver echoing its request's headers as JSON). Without surrounding spaces, which a header
 * value loses on the way; a secret that is nothing else is left alone.
 */
function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    const value = secret.trim();
    if (value === '') continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
  }
  return [...forms];
}

/** How many bytes past the kept ones must be read to see whole every secret that begins in them. */
export function secretLookaheadBytes(secrets: readonly string[]): number {
  return Math.max(0, ...secretForms(secrets).map((form) => Buffer.byteLength(form) - 1));
}

/**
 * An answer's first `keep` bytes as text for the delivery log: UTF-8 with invalid sequences
 * replaced (U+FFFD), and NUL replaced too, since PostgreSQL text cannot hold it. When the bytes
 * were `cut` from a longer answer, a character split by the cut is left out rather than shown as
 * invalid. Every occurrence of one of `secrets` that begins in those bytes is replaced by
 * `[redacted]` whole, also when it runs past them (so no cut prefix of a secret remains): for
 * that, `bytes` may hold more than `keep` (see secretLookaheadBytes). The text has at most `keep`
 * characters either way: a marker that does not fit whole is cut like the text.
 */
export function responseBodyText(bytes: Uint8Array, cut = false, secrets: readonly string[] = [], keep = RESPONSE_BODY_BYTES): string {
  const decode = (part: Uint8Array, stream: boolean) =>
    new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(part, { stream });
  const longer = bytes.length > keep;
  const text = decode(bytes, cut || longer);
  // Where the kept bytes end in the text: decoding is the same whether a prefix or the whole is decoded.
  const end = longer ? decode(bytes.subarray(0, keep), true).length : text.length;
  const occurrences: [number, number][] = [];
  for (const form of secretForms(secrets)) {
    for (let at = text.indexOf(form); at !== -1 && at < end; at = text.indexOf(form, at + 1)) occurrences.push([at, at + form.length]);
  }
  occurrences.sort((a, b) => a[0] - b[0]);
  if (occurrences.length === 0) return text.slice(0, end).replace(/\0/g, '\uFFFD');
  // A marker can be longer than the secret it stands for: the text is kept within `keep`
  // characters (no more than the kept bytes can decode to), cutting what does not fit, a marker too.
  let out = '';
  const append = (piece: string): boolean => {
    const room = keep - out.length;
    out += piece.length <= room ? piece : withoutSplitPair(piece.slice(0, room));
    return piece.length < room;
  };
  let from = 0;
  for (const [start, stop] of occurrences) {
    // Overlapping occurrences (one secret inside another) make one marker.
    if (start < from) {
      from = Math.max(from, stop);
      continue;
    }
    if (!append(text.slice(from, start)) || !append(REDACTED)) return out.replace(/\0/g, '\uFFFD');
    from = stop;
  }
  if (from < end) append(text.slice(from, end));
  return out.replace(/\0/g, '\uFFFD');
}

/** `text` without a high surrogate left at its end by a cut (half of a character). */
function withoutSplitPair(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** OpenSSL and Node codes of a failed TLS handshake or certificate check. */
const TLS_FAILURE_CODE =
  /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH|EPROTO)/;

/** How a connection ends when the peer hangs up without answering. */
const CLOSED_WITHOUT_ANSWER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

function describeFailure(error: unknown, timeoutMs: number, clientCertificate = false): { outcome: AttemptOutcome; error: string } {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const detail = e.cause?.message ?? e.message ?? '';
  if (TLS_FAILURE_CODE.test(code)) {
    // Said plainly: an integrator reading the log must see it was the certificate or handshake.
    return { outcome: 'network_error', error: `TLS handshake failed (${code}): ${detail}`.slice(0, 500) };
  }
  if (clientCertificate && CLOSED_WITHOUT_ANSWER.has(code)) {
    // Under TLS 1.3 a server checks the client certificate after the handshake, and many then
    // simply close the connection: the likeliest cause is worth naming.
    return {
      outcome: 'network_error',
      error:
        `TLS: the receiver closed the connection without answering, as servers do when they refuse the client certificate (${code}: ${detail})`.slice(
          0,
          500,
        ),
    };
  }
  const failure = classifyFetchFailure(error, timeoutMs);
  const outcome: AttemptOutcome = failure.kind === 'blocked' ? 'blocked' : failure.kind === 'timeout' ? 'timeout' : 'network_error';
  return { outcome, error: failure.message.slice(0, 500) };
}
