import { setTimeout as sleep } from 'node:timers/promises';
import { urlPolicyOf } from '../../../../common/net/url-policy';
import type { AppConfig } from '../../../../config/app-config';
import type { DeliveryTarget } from '../../../webhook-endpoints/delivery-target.reader';
import type { AttemptSlots } from '../attempt-slots';
import { OAuth2Client, OAuth2TokenCache, TokenRequestError } from '../oauth2-tokens';
import { ClientTls, SendResult, WebhookSender } from '../webhook-sender';
import { attemptMayStart } from '../webhook.rules';
import type { Destination, OutboundMessage, SendDeadline } from './destination';

const USER_AGENT = 'nft-wallet-webhooks/1.0';

/**
 * HTTP: the webhook POSTed to the endpoint's url over pooled keep-alive connections (one shared
 * pool, one per endpoint with mutual TLS), with the endpoint's OAuth2 token when it wants one and
 * the one resend a 401 earns. One instance serves every HTTP endpoint.
 */
export class HttpDestination implements Destination {
  private readonly sender: WebhookSender;
  /** OAuth2 tokens of the endpoints that want one, in memory only. */
  private readonly tokens: OAuth2TokenCache;

  constructor(
    private readonly config: AppConfig,
    private readonly slots: AttemptSlots,
  ) {
    this.sender = new WebhookSender({ timeoutMs: config.webhook.timeoutMs, ...urlPolicyOf(config) });
    this.tokens = new OAuth2TokenCache((client) => this.sender.requestToken(client));
  }

  /**
   * Sends the attempt once (twice after a 401 with a token). The message's `signedAt` is the
   * attempt's place under its endpoint's rate limit, so its webhook-timestamp names the second it
   * was counted in.
   */
  send(message: OutboundMessage, deadline: SendDeadline): Promise<SendResult> {
    const target = message.target;
    const headersAt = (at: Date) => ({ ...httpHeaders(target, message.headersAt(at)) });
    if (target.auth === null) {
      return this.sender.send(
        target.url as string,
        message.body,
        headersAt(message.signedAt),
        clientTlsOf(target),
        Object.values(target.headers),
      );
    }
    return this.sendWithToken(target, message.body, headersAt, message.signedAt, deadline.leaseUntil);
  }

  /**
   * Sends with `Authorization: Bearer <token>`. A 401 means the receiver no longer takes the
   * cached token (revoked, rotated, expired early): one new token and one more try, inside this
   * same attempt. That resend is a request to the endpoint like any other: it takes a place of its
   * own under the endpoint's rate limit (and is signed at it), and goes only while the claim's
   * lease still covers it; otherwise the attempt ends with the 401. A token that cannot be
   * obtained fails the attempt with the reason.
   */
  private async sendWithToken(
    target: DeliveryTarget,
    payload: string,
    headersAt: (signedAt: Date) => Record<string, string>,
    signedAt: Date,
    leaseUntil: Date,
  ): Promise<SendResult> {
    const client: OAuth2Client = { endpointId: target.endpointId, ...(target.auth as NonNullable<DeliveryTarget['auth']>) };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: unknown): SendResult => ({
      outcome: error instanceof TokenRequestError && error.blocked ? 'blocked' : 'network_error',
      status: null,
      error: `no OAuth2 token: ${error instanceof TokenRequestError ? error.message : 'the token request failed'}`,
      durationMs: elapsed(),
      responseBody: null,
    });
    let token: string;
    try {
      token = await this.tokens.token(client);
    } catch (error) {
      return failed(error);
    }
    const tls = clientTlsOf(target);
    // The tokens and custom header values never reach the delivery log, even echoed by the receiver.
    const secrets = [...Object.values(target.headers), token];
    const first = await this.sender.send(
      target.url as string,
      payload,
      { ...headersAt(signedAt), authorization: `Bearer ${token}` },
      tls,
      secrets,
    );
    if (first.status !== 401) return first;
    this.tokens.invalidate(client, token);
    try {
      token = await this.tokens.token(client);
    } catch (error) {
      return failed(error);
    }
    secrets.push(token);
    const resendAt = await this.resendPlace(target, leaseUntil);
    if (resendAt === null) {
      return {
        ...first,
        error: `${first.error ?? 'receiver answered 401'}; not sent again with a new token: no place under the endpoint's rateLimitPerSecond in time`,
        durationMs: elapsed(),
      };
    }
    const second = await this.sender.send(
      target.url as string,
      payload,
      { ...headersAt(resendAt), authorization: `Bearer ${token}` },
      tls,
      secrets,
    );
    return { ...second, durationMs: elapsed() };
  }

  /**
   * When the resend after a 401 goes: now, or at the place the endpoint's rate limit gives it
   * (Redis's clock, as for any attempt), waiting for the next window while the limit is used up.
   * Null when no place comes while the claim's lease still covers a request (see attemptMayStart).
   */
  private async resendPlace(target: DeliveryTarget, leaseUntil: Date): Promise<Date | null> {
    const mayStartAt = (atMs: number) => attemptMayStart(leaseUntil.getTime(), atMs, this.config.webhook.timeoutMs);
    if (!mayStartAt(Date.now())) return null;
    const limit = target.rateLimitPerSecond;
    if (limit === null) return new Date();
    for (;;) {
      const place = await this.slots.ratePlace(target.endpointId, limit);
      if (place.given) return mayStartAt(Date.now()) ? new Date(place.atMs) : null;
      if (!mayStartAt(Date.now() + place.waitMs)) return null;
      // Back at the very start of the next window, ahead of the waiting attempts (they spread over its first moments).
      await sleep(place.waitMs);
    }
  }

  async close(): Promise<void> {
    await this.sender.close();
  }
}

/**
 * The attempt's headers as HTTP sends them: HTTP's content type and user-agent added, and without
 * the custom headers HTTP must not send. Authorization and Proxy-Authorization are refused as
 * custom headers (authentication goes through `auth`), but an endpoint saved before that may
 * still hold one: an Authorization beside `auth` would go out as a second one, and a
 * Proxy-Authorization would speak to the deployment's proxy, so those are left out.
 */
function httpHeaders(target: DeliveryTarget, headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === 'proxy-authorization' || (lower === 'authorization' && target.auth !== null)) continue;
    out[name] = value;
  }
  out['content-type'] = 'application/json; charset=utf-8';
  out['user-agent'] = USER_AGENT;
  return out;
}

/** The client certificate an endpoint presents, if any. */
function clientTlsOf(target: DeliveryTarget): ClientTls | null {
  return target.tls === null ? null : { endpointId: target.endpointId, ...target.tls };
}
